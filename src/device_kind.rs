//! Where frames are decoded and where batches live: [`Device`] in the config, resolved once when the operator
//! is built, and [`DecodedOn`] on each batch. Plain values, a leaf module: the config and the errors name them
//! without depending on the GPU runtime.

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
