//! Which streams the NVDEC backend takes, judged before opening from what the container says. Plain logic, in
//! both builds (the worker asks only when the operator has a GPU).

use crate::info::StreamInfo;

/// Whether NVDEC (on Hopper and earlier) can decode the stream, judged from what the
/// container says: codec, bit depth, chroma format and size. `Err` says why not. libavcodec has the last word
/// (it falls back to software when NVDEC refuses at run time, e.g. AV1 on GPUs without AV1 decoding), which
/// the NVDEC backend reports as [`VideoError::NvdecUnsupported`](crate::VideoError::NvdecUnsupported), and the
/// worker then moves the video to the CPU.
pub(crate) fn nvdec_support(stream: &StreamInfo) -> Result<(), String> {
    let codec = stream.codec.as_str();
    // NVDEC's smallest and largest sizes per codec (NVIDIA Video Codec SDK, NVDEC application note, Ampere
    // and Hopper); libavcodec checks the same limits with cuvidGetDecoderCaps when it opens the hwaccel.
    let ((min_w, min_h), max) = match codec {
        "h264" | "vp8" => ((48, 16), 4096),
        "mpeg1video" | "mpeg2video" | "mpeg4" | "vc1" | "wmv3" => ((48, 16), 4080),
        "hevc" => ((144, 144), 8192),
        "vp9" | "av1" => ((128, 128), 8192),
        other => return Err(format!("NVDEC does not decode {other}")),
    };
    let fmt = stream.pixel_format.as_deref().unwrap_or("yuv420p");
    let eight_bit = matches!(fmt, "yuv420p" | "yuvj420p" | "nv12");
    let ten_bit = matches!(
        fmt,
        "yuv420p10le" | "yuv420p10be" | "p010le" | "yuv420p12le"
    );
    if !(eight_bit || ten_bit) {
        return Err(format!(
            "{codec} in {fmt}: framefeed's NVDEC path takes 4:2:0 only"
        ));
    }
    if ten_bit && !matches!(codec, "hevc" | "vp9" | "av1") {
        return Err(format!(
            "NVDEC does not decode {codec} in {fmt} (High10 and the like)"
        ));
    }
    let (w, h) = (stream.width, stream.height);
    if w < min_w || h < min_h || w > max || h > max {
        return Err(format!(
            "{w}x{h} is outside NVDEC's sizes for {codec} ({min_w}x{min_h} to {max}x{max})"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(codec: &str, fmt: &str, w: u32, h: u32) -> StreamInfo {
        StreamInfo::video(codec, fmt, w, h)
    }

    #[test]
    fn nvdec_takes_what_hopper_decodes_and_names_the_rest() {
        for ok in [
            stream("h264", "yuv420p", 1920, 1080),
            stream("h264", "yuvj420p", 3840, 2160),
            stream("hevc", "yuv420p10le", 7680, 4320),
            stream("vp9", "yuv420p", 1280, 720),
            stream("vp9", "yuv420p", 321, 241),
            stream("vp8", "yuv420p", 640, 480),
            stream("h264", "yuv420p", 48, 16),
            stream("mpeg4", "yuv420p", 320, 240),
        ] {
            assert_eq!(
                nvdec_support(&ok),
                Ok(()),
                "{} {:?}",
                ok.codec,
                ok.pixel_format
            );
        }
        for (bad, why) in [
            (stream("h264", "yuv420p10le", 1920, 1080), "High10"),
            (stream("h264", "yuv422p", 1920, 1080), "4:2:0 only"),
            (stream("hevc", "yuv444p", 1920, 1080), "4:2:0 only"),
            (
                stream("prores", "yuv422p10le", 1920, 1080),
                "does not decode prores",
            ),
            (
                stream("h264", "yuv420p", 8192, 4320),
                "outside NVDEC's sizes",
            ),
            (stream("vp9", "yuv420p", 35, 19), "outside NVDEC's sizes"),
            (
                stream("hevc", "yuv420p", 96, 64),
                "outside NVDEC's sizes for hevc (144x144",
            ),
            (stream("av1", "yuv420p", 96, 64), "(128x128 to 8192x8192)"),
            (stream("mpeg2video", "yuv420p", 4096, 2160), "4080x4080"),
        ] {
            let err = nvdec_support(&bad).unwrap_err();
            assert!(err.contains(why), "{err}");
        }
    }
}
