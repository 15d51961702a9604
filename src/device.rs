//! Where frames are decoded and where batches live: [`Device`] in the config, resolved once when the operator
//! is built. With the `cuda` feature, `Device::Cuda` decodes on NVDEC and keeps frames and batches in GPU
//! memory; without it, or on a machine without a usable GPU, asking for CUDA is an error value and
//! [`Device::Auto`] picks the CPU.

use std::fmt;

/// Where videos are decoded ([`Config::device`](crate::Config::device)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Device {
    /// libavcodec's software decoders; batches in host memory (the default).
    #[default]
    Cpu,
    /// NVDEC on the CUDA device of this ordinal (0 for the first GPU); batches in that GPU's memory
    /// ([`Batch::cuda`](crate::Batch)). Needs the `cuda` feature, the NVIDIA driver (`libcuda.so.1`) and its
    /// video decoder library (`libnvcuvid.so.1`); without them
    /// [`VideoInput::new`](crate::VideoInput::new) fails with [`Error::CudaUnavailable`](crate::Error).
    Cuda(usize),
    /// CUDA device 0 when a usable GPU with NVDEC is present (and the `cuda` feature is built), else the CPU.
    /// [`VideoInput::device`](crate::VideoInput::device) tells which was chosen.
    Auto,
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Cpu => f.write_str("cpu"),
            Device::Cuda(n) => write!(f, "cuda:{n}"),
            Device::Auto => f.write_str("auto"),
        }
    }
}

impl std::str::FromStr for Device {
    type Err = String;

    /// `cpu`, `cuda` (device 0), `cuda:N` or `auto`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "cpu" => Ok(Device::Cpu),
            "cuda" | "gpu" => Ok(Device::Cuda(0)),
            "auto" => Ok(Device::Auto),
            other => match other.strip_prefix("cuda:").map(str::parse::<usize>) {
                Some(Ok(n)) => Ok(Device::Cuda(n)),
                _ => Err(format!(
                    "unknown device {other:?}; expected cpu, cuda, cuda:N or auto"
                )),
            },
        }
    }
}

/// Where a batch's frames were decoded ([`Batch::decoded_on`](crate::Batch::decoded_on)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodedOn {
    /// libavcodec on the CPU (with a GPU device: a video NVDEC could not decode, uploaded in one copy per
    /// batch).
    Cpu,
    /// NVDEC, converted by framefeed's CUDA kernel.
    Cuda,
}

/// Why CUDA cannot be used in a build without the `cuda` feature.
#[cfg(not(feature = "cuda"))]
pub(crate) const NOT_BUILT: &str =
    "framefeed was built without the `cuda` feature (build with `--features cuda`)";

/// What is known about CUDA on this machine, for diagnostics (`framefeed info --device`): the driver's
/// version and device count, or why CUDA cannot be used. Never panics, whatever is installed.
pub fn cuda_status() -> Result<String, String> {
    #[cfg(feature = "cuda")]
    {
        let p = crate::ffi::cuda::probe::probe()?;
        Ok(format!(
            "CUDA driver {}.{}, {} device(s), NVDEC library {}",
            p.driver_version / 1000,
            p.driver_version % 1000 / 10,
            p.devices,
            if p.nvdec { "present" } else { "missing" }
        ))
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err(NOT_BUILT.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_parse_and_print() {
        for (s, d) in [
            ("cpu", Device::Cpu),
            ("cuda", Device::Cuda(0)),
            ("cuda:3", Device::Cuda(3)),
            ("auto", Device::Auto),
        ] {
            assert_eq!(s.parse::<Device>(), Ok(d));
        }
        assert_eq!(Device::Cuda(2).to_string(), "cuda:2");
        let err = "tpu".parse::<Device>().unwrap_err();
        assert!(err.contains("cpu, cuda, cuda:N or auto"), "{err}");
        assert!("cuda:x".parse::<Device>().is_err());
    }
}
