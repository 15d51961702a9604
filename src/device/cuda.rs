//! The device layer with the `cuda` feature: one operator's GPU runtime and its pooled batch buffers in GPU
//! memory, on cudarc. NVDEC decoding itself is the CUDA decoder backend's (`decode::cuda`); it reads the
//! runtime's libavcodec device from here.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtrMut, DriverError};
use parking_lot::Mutex;

use crate::error::{Error, VideoError};
use crate::ffi::cuda::hw::HwDevice;
use crate::ffi::cuda::params::ConvertParams;
use crate::ffi::cuda::{kernel, probe};

/// A CUDA failure while decoding or converting, as a video error.
pub(crate) fn cuda_error(operation: &'static str, e: DriverError) -> VideoError {
    VideoError::Cuda {
        operation,
        message: e.to_string(),
    }
}

/// What is known about CUDA on this machine, for diagnostics (`framefeed info --device`): the driver's
/// version and device count, or why CUDA cannot be used. Never panics, whatever is installed.
pub fn cuda_status() -> Result<String, String> {
    let p = probe::probe()?;
    Ok(format!(
        "CUDA driver {}.{}, {} device(s), NVDEC library {}",
        p.driver_version / 1000,
        p.driver_version % 1000 / 10,
        p.devices,
        if p.nvdec { "present" } else { "missing" }
    ))
}

/// Sets up CUDA device `ordinal` for one operator. `Err` says why it cannot be used; never panics (the
/// driver is probed first, and a panic in cudarc's loader is caught as a last guard).
pub(crate) fn runtime(ordinal: usize, max_free: usize) -> Result<Arc<GpuRuntime>, String> {
    std::panic::catch_unwind(AssertUnwindSafe(|| GpuRuntime::new(ordinal, max_free)))
        .unwrap_or_else(|_| Err("the CUDA driver library panicked while loading".to_owned()))
}

/// One operator's GPU: its device's (primary, shared) context, its own stream, the conversion kernel,
/// libavcodec's CUDA device around them, and the idle batch buffers. Fields drop in order: libavcodec's device
/// first, the stream (and with it the context) last.
pub(crate) struct GpuRuntime {
    hw: HwDevice,
    function: CudaFunction,
    /// Idle device buffers, recycled like the host ones ([`crate::assembly::pool::BufferPool`]).
    free: Mutex<Vec<CudaSlice<u8>>>,
    /// The most idle device buffers kept; only raised ([`GpuRuntime::keep_idle_at_least`]).
    max_free: AtomicUsize,
    stream: Arc<CudaStream>,
}

impl GpuRuntime {
    fn new(ordinal: usize, max_free: usize) -> Result<Arc<Self>, String> {
        probe::usable(ordinal)?;
        let ctx = std::panic::catch_unwind(|| CudaContext::new(ordinal))
            .map_err(|_| "the CUDA driver library lacks a function framefeed needs".to_owned())?
            .map_err(|e| format!("creating a context on CUDA device {ordinal}: {e}"))?;
        let stream = ctx
            .new_stream()
            .map_err(|e| format!("creating a CUDA stream: {e}"))?;
        let function =
            kernel::load(&ctx).map_err(|e| format!("loading the conversion kernel: {e}"))?;
        let hw = HwDevice::new(ctx.cu_ctx().cast(), stream.cu_stream().cast())
            .map_err(|e| format!("libavcodec's CUDA device: {e}"))?;
        Ok(Arc::new(Self {
            hw,
            function,
            free: Mutex::new(Vec::new()),
            max_free: AtomicUsize::new(max_free),
            stream,
        }))
    }

    /// Keeps at least `n` idle device buffers from now on (as
    /// [`BufferPool::keep_idle_at_least`](crate::assembly::pool::BufferPool::keep_idle_at_least) does on the
    /// host).
    pub(crate) fn keep_idle_at_least(&self, n: usize) {
        self.max_free.fetch_max(n, Ordering::Relaxed);
    }

    /// libavcodec's CUDA device on this runtime's context and stream (for the NVDEC decoder).
    pub(crate) fn hw(&self) -> &HwDevice {
        &self.hw
    }

    /// The stream every copy and kernel of this operator runs on.
    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// A device buffer of at least `len` bytes (its contents unspecified), recycled when one fits.
    pub(crate) fn acquire(self: &Arc<Self>, len: usize) -> Result<DeviceBuffer, VideoError> {
        let recycled = super::reuse::take_best_fit(&mut self.free.lock(), len, CudaSlice::len);
        let slice = match recycled {
            Some(s) => s,
            None => self
                .stream
                .alloc_zeros::<u8>(len.max(1))
                .map_err(|e| cuda_error("allocating a batch buffer", e))?,
        };
        Ok(DeviceBuffer {
            slice: Some(slice),
            len,
            gpu: self.clone(),
        })
    }

    /// Copies a batch assembled in host memory into a device buffer (one copy per batch).
    pub(crate) fn upload(self: &Arc<Self>, host: &[u8]) -> Result<DeviceBuffer, VideoError> {
        let mut buf = self.acquire(host.len())?;
        if !host.is_empty() {
            self.stream
                .memcpy_htod(host, &mut buf.slice_mut().slice_mut(..host.len()))
                .map_err(|e| cuda_error("uploading a CPU-decoded batch", e))?;
        }
        Ok(buf)
    }
}

/// A batch's buffer in GPU memory, written in order on its runtime's stream; back to the runtime's pool when
/// dropped. It keeps its runtime (context, stream, kernel) alive, also after the operator is gone.
pub(crate) struct DeviceBuffer {
    slice: Option<CudaSlice<u8>>,
    /// Bytes in use.
    len: usize,
    gpu: Arc<GpuRuntime>,
}

impl DeviceBuffer {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// The whole allocation (at least `len` bytes).
    pub(crate) fn slice(&self) -> &CudaSlice<u8> {
        self.slice.as_ref().expect("present until dropped")
    }

    fn slice_mut(&mut self) -> &mut CudaSlice<u8> {
        self.slice.as_mut().expect("present until dropped")
    }

    /// The stream that writes this buffer.
    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        self.gpu.stream()
    }

    /// Zeroes bytes `range` (stream-ordered).
    pub(crate) fn zero(&mut self, range: std::ops::Range<usize>) -> Result<(), VideoError> {
        if range.is_empty() {
            return Ok(());
        }
        let stream = self.gpu.stream.clone();
        stream
            .memset_zeros(&mut self.slice_mut().slice_mut(range))
            .map_err(|e| cuda_error("zeroing padding frames", e))
    }

    /// Moves bytes `src` to start at `dst` (ranges may overlap), through a temporary buffer.
    pub(crate) fn copy_within(
        &mut self,
        src: std::ops::Range<usize>,
        dst: usize,
    ) -> Result<(), VideoError> {
        let n = src.len();
        if n == 0 {
            return Ok(());
        }
        let err = |e| cuda_error("compacting a partial sequence", e);
        let stream = self.gpu.stream.clone();
        let mut tmp = stream.alloc_zeros::<u8>(n).map_err(err)?;
        stream
            .memcpy_dtod(&self.slice().slice(src), &mut tmp)
            .map_err(err)?;
        stream
            .memcpy_dtod(&tmp, &mut self.slice_mut().slice_mut(dst..dst + n))
            .map_err(err)
    }

    /// Enqueues the kernel writing one frame, per `params`, into bytes `[start, start + len)` of this buffer.
    pub(crate) fn convert(
        &mut self,
        mut params: ConvertParams,
        start: usize,
        len: usize,
    ) -> Result<(), VideoError> {
        assert!(
            start + len <= self.len,
            "the sequence's region must lie in the buffer"
        );
        let gpu = self.gpu.clone();
        let (base, _record_write) = self.slice_mut().device_ptr_mut(&gpu.stream);
        params.out = base + start as u64;
        kernel::launch(&gpu.stream, &gpu.function, &params)
            .map_err(|e| cuda_error("launching the conversion kernel", e))
    }

    /// Copies the first `len` bytes to the host (waits for the stream).
    pub(crate) fn to_host(&self) -> Result<Vec<u8>, Error> {
        let mut host = Vec::new();
        host.try_reserve_exact(self.len)
            .map_err(|_| Error::OutOfMemory {
                what: "a batch copied to the host",
                bytes: self.len,
            })?;
        host.resize(self.len, 0);
        if self.len > 0 {
            let stream = &self.gpu.stream;
            stream
                .memcpy_dtoh(&self.slice().slice(..self.len), &mut host)
                .and_then(|()| stream.synchronize())
                .map_err(|e| Error::Cuda {
                    operation: "copying a batch to the host",
                    message: e.to_string(),
                })?;
        }
        Ok(host)
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        let Some(slice) = self.slice.take() else {
            return;
        };
        let mut free = self.gpu.free.lock();
        if free.len() < self.gpu.max_free.load(Ordering::Relaxed) {
            free.push(slice);
        }
        // Otherwise the slice is freed here (cudarc frees it on its stream, without panicking).
    }
}
