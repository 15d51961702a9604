//! The device layer without the `cuda` feature: the GPU runtime and device buffers as uninhabited types, so
//! that code using them needs no `cfg` (see the module above). Nothing here can be reached but [`runtime`] and
//! [`cuda_status`], which say that the build has no CUDA.

use std::sync::Arc;

use crate::error::{Error, VideoError};
use crate::ffi::cuda::params::ConvertParams;

/// Why CUDA cannot be used in a build without the `cuda` feature.
const NOT_BUILT: &str =
    "framefeed was built without the `cuda` feature (build with `--features cuda`)";

/// What is known about CUDA on this machine, for diagnostics: in this build, that there is no CUDA support.
/// Never panics.
pub fn cuda_status() -> Result<String, String> {
    Err(NOT_BUILT.to_owned())
}

/// An operator's GPU: none can exist in this build.
pub(crate) enum GpuRuntime {}

/// A batch buffer in GPU memory: none can exist in this build.
pub(crate) enum DeviceBuffer {}

/// Always `Err`: this build has no CUDA.
pub(crate) fn runtime(_ordinal: usize, _max_free: usize) -> Result<Arc<GpuRuntime>, String> {
    Err(NOT_BUILT.to_owned())
}

impl GpuRuntime {
    pub(crate) fn keep_idle_at_least(&self, _n: usize) {
        match *self {}
    }

    pub(crate) fn acquire(self: &Arc<Self>, _len: usize) -> Result<DeviceBuffer, VideoError> {
        match **self {}
    }

    pub(crate) fn upload(self: &Arc<Self>, _host: &[u8]) -> Result<DeviceBuffer, VideoError> {
        match **self {}
    }
}

impl DeviceBuffer {
    pub(crate) fn len(&self) -> usize {
        match *self {}
    }

    pub(crate) fn truncate(&mut self, _len: usize) {
        match *self {}
    }

    pub(crate) fn zero(&mut self, _range: std::ops::Range<usize>) -> Result<(), VideoError> {
        match *self {}
    }

    pub(crate) fn copy_within(
        &mut self,
        _src: std::ops::Range<usize>,
        _dst: usize,
    ) -> Result<(), VideoError> {
        match *self {}
    }

    pub(crate) fn convert(
        &mut self,
        _params: ConvertParams,
        _start: usize,
        _len: usize,
    ) -> Result<(), VideoError> {
        match *self {}
    }

    pub(crate) fn to_host(&self) -> Result<Vec<u8>, Error> {
        match *self {}
    }
}
