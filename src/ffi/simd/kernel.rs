//! Which vector code this CPU runs: one choice for every vector loop of this layer (the YUV → RGB conversion
//! [`super::yuv2rgb`], the resampler's passes [`super::filter_rows`], the float writer's channel split
//! [`super::split_channels`]), detected once per process. Each loop has a scalar twin that its vector code
//! equals exactly, and the tests run every kernel the CPU has against it.

use std::sync::OnceLock;

/// The code a loop runs on: the widest this CPU has ([`Kernel::best`]), or (in tests) any it has.
/// Off x86-64 only the scalar twins exist, so the other two are never made there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) enum Kernel {
    /// The scalar twins only.
    Scalar,
    /// AVX2.
    Avx2,
    /// AVX-512 with the byte permutes and the 16-bit dot products (`avx512f`, `bw`, `vl`, `vbmi`, `vnni`:
    /// Ice Lake and Zen 4 on), where a loop has such a form (the YUV → RGB conversion and the resampler's
    /// vertical pass); AVX2 for the others.
    Avx512,
}

impl Kernel {
    /// Every kernel, narrowest first.
    #[cfg(test)]
    pub(crate) const ALL: [Kernel; 3] = [Kernel::Scalar, Kernel::Avx2, Kernel::Avx512];

    /// Whether this CPU runs the kernel.
    pub(crate) fn available(self) -> bool {
        match self {
            Kernel::Scalar => true,
            Kernel::Avx2 => Kernel::best() != Kernel::Scalar,
            Kernel::Avx512 => Kernel::best() == Kernel::Avx512,
        }
    }

    /// The widest kernel this CPU runs (detected once per process).
    pub(crate) fn best() -> Kernel {
        static BEST: OnceLock<Kernel> = OnceLock::new();
        *BEST.get_or_init(detect)
    }
}

/// The widest kernel this CPU runs.
fn detect() -> Kernel {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if !has!("avx2") {
            return Kernel::Scalar;
        }
        if has!("avx512f")
            && has!("avx512bw")
            && has!("avx512vl")
            && has!("avx512vbmi")
            && has!("avx512vnni")
        {
            return Kernel::Avx512;
        }
        Kernel::Avx2
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Kernel::Scalar
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_kernel_and_every_narrower_one_are_available() {
        let best = Kernel::best();
        let rank = |k: Kernel| Kernel::ALL.iter().position(|&a| a == k).unwrap();
        for k in Kernel::ALL {
            assert_eq!(
                k.available(),
                rank(k) <= rank(best),
                "{k:?} against the best, {best:?}"
            );
        }
        eprintln!("this CPU's best kernel: {best:?}");
    }
}
