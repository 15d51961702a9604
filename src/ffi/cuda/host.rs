//! The kernel's per-pixel code compiled for the CPU (tests only): `kernels/convert.cu` built as C++ with the
//! system's compiler and loaded, to test the kernel's arithmetic against the CPU backend on any machine, in
//! both builds.

use super::params::ConvertParams;
use std::path::Path;

/// `kernels/convert.cu` built as a shared library with the system's C++ compiler and loaded.
pub(crate) struct HostKernel {
    _lib: libloading::Library,
    entry: unsafe extern "C" fn(*const ConvertParams),
}

impl HostKernel {
    /// Compiles the kernel source (once per call) into `dir`. `Err` when no C++ compiler is found.
    pub(crate) fn build(dir: &Path) -> Result<Self, String> {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/convert.cu");
        let lib = dir.join("framefeed_convert_host.so");
        let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_owned());
        let out = std::process::Command::new(&cxx)
            .args(["-x", "c++", "-O2", "-shared", "-fPIC", "-o"])
            .arg(&lib)
            .arg(&src)
            .output()
            .map_err(|e| format!("{cxx}: {e}"))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        // SAFETY: the library is the kernel source we just compiled; it has no initialisers of its own.
        let lib = unsafe { libloading::Library::new(&lib) }.map_err(|e| e.to_string())?;
        // SAFETY: `framefeed_convert_host` has this signature in kernels/convert.cu.
        let entry = unsafe {
            *lib.get::<unsafe extern "C" fn(*const ConvertParams)>(b"framefeed_convert_host\0")
                .map_err(|e| e.to_string())?
        };
        Ok(Self { _lib: lib, entry })
    }

    /// Runs the kernel's grid on the CPU. `params`' addresses are host addresses here: `luma`/`chroma`
    /// of `src` planes with their pitches, `out` of a buffer of the sequence's output size.
    pub(crate) fn run(&self, params: &ConvertParams, planes: (&[u8], &[u8]), out: &mut [u8]) {
        let (luma, chroma) = planes;
        let rows = |pitch: i32, h: i32| pitch as usize * h as usize;
        // The surface's rows: the shown width when the kernel turns it a quarter (`orient` bit 4).
        let coded_h = if params.orient & 4 != 0 {
            params.src_w
        } else {
            params.src_h
        };
        assert!(luma.len() >= rows(params.luma_pitch, coded_h));
        assert!(chroma.len() >= rows(params.chroma_pitch, (coded_h + 1) / 2));
        assert!(out.len() >= params.output_bytes());
        let mut p = *params;
        p.luma = luma.as_ptr() as u64;
        p.chroma = chroma.as_ptr() as u64;
        p.out = out.as_mut_ptr() as u64;
        // SAFETY: every address points into a live slice of the size the kernel reads or writes (asserted
        // above from the same parameters the kernel uses).
        unsafe { (self.entry)(&p) }
    }
}
