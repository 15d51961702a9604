//! Finding out, without panicking, whether CUDA can be used: the driver library is opened with `libloading`
//! and asked for its version and devices before cudarc is touched (cudarc's own loader panics when the library
//! is missing). The answer is computed once per process.

use std::ffi::c_int;
use std::sync::OnceLock;

/// What the driver said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Probe {
    /// `cuDriverGetVersion`: 1000 * major + 10 * minor.
    pub(crate) driver_version: i32,
    /// `cuDeviceGetCount`.
    pub(crate) devices: i32,
    /// Whether NVDEC's library (`libnvcuvid.so.1`, which libavcodec loads) is present.
    pub(crate) nvdec: bool,
}

/// The driver library's name: the same one libavcodec and cudarc open.
const LIBCUDA: &str = "libcuda.so.1";
const LIBNVCUVID: &str = "libnvcuvid.so.1";
/// The oldest driver API framefeed's CUDA code is built for (cudarc's `cuda-12060`... features need 12.0+
/// entry points for what framefeed calls).
const MIN_DRIVER: i32 = 12000;

fn run_probe() -> Result<Probe, String> {
    type Init = unsafe extern "C" fn(u32) -> c_int;
    type GetInt = unsafe extern "C" fn(*mut c_int) -> c_int;
    // SAFETY: loading the NVIDIA driver library runs its initialisers, which are safe to run in any process;
    // the library is kept loaded for the life of the process (leaked below), so symbols from it stay valid.
    let lib = unsafe { libloading::Library::new(LIBCUDA) }
        .map_err(|e| format!("the NVIDIA driver library {LIBCUDA} could not be loaded ({e})"))?;
    let lib: &'static libloading::Library = Box::leak(Box::new(lib));
    // SAFETY: these are the CUDA driver API's documented signatures (CUresult is a C int).
    let (init, version, count) = unsafe {
        let init: libloading::Symbol<'static, Init> = lib
            .get(b"cuInit\0")
            .map_err(|e| format!("{LIBCUDA} has no cuInit ({e})"))?;
        let version: libloading::Symbol<'static, GetInt> = lib
            .get(b"cuDriverGetVersion\0")
            .map_err(|e| format!("{LIBCUDA} has no cuDriverGetVersion ({e})"))?;
        let count: libloading::Symbol<'static, GetInt> = lib
            .get(b"cuDeviceGetCount\0")
            .map_err(|e| format!("{LIBCUDA} has no cuDeviceGetCount ({e})"))?;
        (*init, *version, *count)
    };
    // SAFETY: cuInit takes flags 0; the out-pointers point at live locals.
    let (ret, driver_version, devices) = unsafe {
        let ret = init(0);
        let (mut v, mut n) = (0, 0);
        if ret == 0 {
            version(&mut v);
            count(&mut n);
        }
        (ret, v, n)
    };
    if ret != 0 {
        return Err(format!(
            "cuInit failed with CUDA error {ret} (no usable GPU or driver)"
        ));
    }
    if driver_version < MIN_DRIVER {
        return Err(format!(
            "the NVIDIA driver supports CUDA {}.{}; framefeed needs 12.0 or later",
            driver_version / 1000,
            driver_version % 1000 / 10
        ));
    }
    // SAFETY: as for libcuda; the handle is dropped at once, only its presence matters (libavcodec opens it
    // again itself).
    let nvdec = unsafe { libloading::Library::new(LIBNVCUVID) }.is_ok();
    Ok(Probe {
        driver_version,
        devices,
        nvdec,
    })
}

/// The driver's answer, computed once.
pub(crate) fn probe() -> Result<Probe, String> {
    static PROBE: OnceLock<Result<Probe, String>> = OnceLock::new();
    PROBE.get_or_init(run_probe).clone()
}

/// `Ok` when CUDA device `ordinal` exists and NVDEC's library is present, else why not.
pub(crate) fn usable(ordinal: usize) -> Result<Probe, String> {
    let p = probe()?;
    if ordinal >= p.devices.max(0) as usize {
        return Err(format!(
            "CUDA device {ordinal} does not exist ({} device(s) found)",
            p.devices
        ));
    }
    if !p.nvdec {
        return Err(format!(
            "NVDEC's library {LIBNVCUVID} is missing (it comes with the NVIDIA driver's video components)"
        ));
    }
    // SAFETY: only tries to open the library under cudarc's candidate names; it does not panic.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err("cudarc could not load the CUDA driver library".to_owned());
    }
    Ok(p)
}
