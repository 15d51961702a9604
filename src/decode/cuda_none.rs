//! The NVDEC backend without the `cuda` feature: there is no GPU runtime to open it on (the device layer's
//! `GpuRuntime` is uninhabited), so this is never reached.

use std::sync::Arc;

use super::backend::Decoder;
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
