//! The conversion kernel's parameter block: `#[repr(C)]`, with the layout of `struct ConvertParams` in
//! `kernels/convert.cu` (checked against the committed PTX below). Plain data, in both builds: the transform
//! stage fills it (`transform::gpu`), the device layer hands it to the kernel (`kernel`, feature `cuda`), and the
//! tests run it through the kernel's code compiled for the CPU (`host`).

/// The kernel's parameter block: the layout of `struct ConvertParams` in `kernels/convert.cu`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ConvertParams {
    pub(crate) luma: u64,
    pub(crate) chroma: u64,
    pub(crate) out: u64,
    pub(crate) luma_pitch: i32,
    pub(crate) chroma_pitch: i32,
    pub(crate) src_w: i32,
    pub(crate) src_h: i32,
    pub(crate) high_depth: i32,
    pub(crate) resized: i32,
    pub(crate) frame_w: i32,
    pub(crate) frame_h: i32,
    pub(crate) filter: i32,
    pub(crate) win_x: i32,
    pub(crate) win_y: i32,
    pub(crate) out_w: i32,
    pub(crate) out_h: i32,
    pub(crate) dtype: i32,
    pub(crate) layout: i32,
    pub(crate) frames: i32,
    pub(crate) frame_index: i32,
    pub(crate) chroma_cubic: i32,
    pub(crate) orient: i32,
    pub(crate) matrix: [f32; 9],
    pub(crate) offset: [f32; 3],
    pub(crate) fill: [f32; 3],
    pub(crate) scale: [f32; 3],
    pub(crate) bias: [f32; 3],
    pub(crate) tonemap: i32,
    pub(crate) hdr_transfer: i32,
    pub(crate) tm_param: f32,
    pub(crate) tm_peak: f32,
    pub(crate) tm_desat: f32,
    pub(crate) tm_hable_peak: f32,
    pub(crate) tm_linear: f32,
    pub(crate) tm_primaries: [f32; 9],
    pub(crate) tm_luma: [f32; 3],
}

impl ConvertParams {
    /// Bytes of the whole sequence output the kernel indexes into.
    pub(crate) fn output_bytes(&self) -> usize {
        let size = match self.dtype {
            0 => 1,
            1 => 4,
            _ => 2, // f16, u16
        };
        // Three channels (RGB) of `size` bytes per output pixel.
        self.frames as usize * self.out_w as usize * self.out_h as usize * 3 * size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_size_matches_the_kernels() {
        // 3 addresses (24 bytes), 21 ints (84), 38 floats (152): 260, then padding to the 8-byte alignment:
        // 264, as the PTX declares it.
        assert_eq!(std::mem::size_of::<ConvertParams>(), 264);
        let ptx = include_str!("../../../kernels/convert.ptx");
        assert!(
            ptx.contains(".param .align 8 .b8 framefeed_convert_param_0[264]"),
            "the PTX's parameter block differs from ConvertParams: regenerate it (kernels/build.sh)"
        );
    }

    #[test]
    fn committed_ptx_is_built_from_the_kernel_source() {
        let out = std::env::temp_dir().join(format!("framefeed-{}.ptx", std::process::id()));
        let root = env!("CARGO_MANIFEST_DIR");
        let built = std::process::Command::new("bash")
            .arg(format!("{root}/kernels/build.sh"))
            .arg(&out)
            .output();
        match built {
            Ok(o) if o.status.success() => {
                let fresh = std::fs::read_to_string(&out).unwrap();
                let _ = std::fs::remove_file(&out);
                assert!(
                    fresh == include_str!("../../../kernels/convert.ptx"),
                    "kernels/convert.ptx is stale: run kernels/build.sh"
                );
            }
            Ok(o) => eprintln!(
                "SKIPPED: clang cannot build the PTX here ({})",
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .next()
                    .unwrap_or("")
            ),
            Err(e) => eprintln!("SKIPPED: bash/clang not found ({e})"),
        }
    }
}
