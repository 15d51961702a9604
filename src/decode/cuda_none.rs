//! The NVDEC backend without the `cuda` feature: there is no GPU runtime to open it on (the device layer's
//! `GpuRuntime` is uninhabited), so this is never reached.

use std::sync::Arc;

use super::backend::Decoder;
use super::frame::DeviceFrame;
use crate::demux::Demuxer;
use crate::device::GpuRuntime;
use crate::error::VideoError;

/// Cannot be called: no `GpuRuntime` exists in this build.
pub(crate) fn open(
    _demuxer: &Demuxer,
    gpu: &Arc<GpuRuntime>,
    _driver: crate::settings::config::NvdecDriver,
) -> Result<Box<dyn Decoder>, VideoError> {
    match **gpu {}
}

/// A decoded picture held in GPU memory: none can exist in this build.
pub(crate) enum HeldPicture {}

impl HeldPicture {
    pub(crate) fn frame(&self) -> &DeviceFrame {
        match *self {}
    }
}

/// Cannot be called: no `GpuRuntime` exists in this build.
pub(crate) fn hold_picture(
    gpu: &Arc<GpuRuntime>,
    _frame: &DeviceFrame,
) -> Result<HeldPicture, VideoError> {
    match **gpu {}
}
