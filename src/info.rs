//! What a container holds: its format and streams, as read by FFmpeg ([`probe`](crate::probe)); and which FFmpeg
//! reads it ([`ffmpeg_build`](crate::ffmpeg_build)).

use crate::orientation::Orientation;

/// The kind of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MediaKind {
    /// Pictures.
    Video,
    /// Sound.
    Audio,
    /// Subtitles.
    Subtitle,
    /// Timed metadata and other data.
    Data,
    /// Attached files (fonts...).
    Attachment,
    /// Anything else.
    Unknown,
}

impl MediaKind {
    /// Lower-case name (`"video"`, `"audio"`...).
    pub fn as_str(self) -> &'static str {
        match self {
            MediaKind::Video => "video",
            MediaKind::Audio => "audio",
            MediaKind::Subtitle => "subtitle",
            MediaKind::Data => "data",
            MediaKind::Attachment => "attachment",
            MediaKind::Unknown => "unknown",
        }
    }
}

/// One stream of a container.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamInfo {
    /// Index in the container, as `ffprobe` numbers it.
    pub index: usize,
    /// Video, audio...
    pub kind: MediaKind,
    /// FFmpeg's codec name (`h264`, `hevc`, `vp9`...).
    pub codec: String,
    /// The codec profile (`High`, `Main 10`...), when known.
    pub profile: Option<String>,
    /// Width in pixels (video).
    pub width: u32,
    /// Height in pixels (video).
    pub height: u32,
    /// The decoder's pixel format (`yuv420p`, `yuv420p10le`...), when known.
    pub pixel_format: Option<String>,
    /// The colour matrix (`bt709`, `smpte170m`...); `None` when the stream leaves it unspecified.
    pub color_space: Option<String>,
    /// `tv` (limited) or `pc` (full); `None` when unspecified.
    pub color_range: Option<String>,
    /// Colour primaries, when specified.
    pub color_primaries: Option<String>,
    /// Transfer characteristics, when specified.
    pub color_transfer: Option<String>,
    /// Average frame rate as a fraction, when known.
    pub frame_rate: Option<(i32, i32)>,
    /// The stream's time base (seconds per timestamp unit) as a fraction.
    pub time_base: (i32, i32),
    /// Duration in seconds, when the container says.
    pub duration: Option<f64>,
    /// Frame count the container claims (not trusted by the decoder), when it says.
    pub frames: Option<u64>,
    /// Bit rate in bits/s, when known.
    pub bit_rate: Option<u64>,
    /// The stream has the "default" disposition.
    pub default: bool,
    /// The stream is an attached picture (cover art), not a video.
    pub attached_picture: bool,
    /// The display matrix the container gives the stream (phone videos: how to turn the picture to show
    /// it), when it gives one; a frame may carry its own. See [`rotation`](Self::rotation) and
    /// [`orientation`](Self::orientation).
    pub display_matrix: Option<[i32; 9]>,
    /// Bits per sample of the decoder's pixel format (8, 10, 12...), when known (video).
    pub bit_depth: Option<u32>,
    /// The mastering display's colour volume (HDR static metadata, SMPTE ST 2086), when the container gives it
    /// (an MP4 `mdcv` box, Matroska's `MasteringMetadata`).
    pub mastering_display: Option<MasteringDisplay>,
    /// The content light levels (HDR static metadata, CTA-861.3), when the container gives them.
    pub content_light: Option<ContentLight>,
    /// Samples a second (audio), when known.
    pub sample_rate: Option<u32>,
    /// Channels (audio), when known.
    pub channels: Option<u32>,
}

/// Which dynamic range a stream's transfer function puts it in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum DynamicRange {
    /// Standard dynamic range: any transfer but the two below, or none given.
    #[default]
    Sdr,
    /// HDR with the perceptual quantizer (SMPTE ST 2084: HDR10, HDR10+, Dolby Vision's base layers).
    Pq,
    /// HDR with hybrid log-gamma (ARIB STD-B67: broadcast, phones' HLG recordings).
    Hlg,
}

impl DynamicRange {
    /// The class of FFmpeg's transfer name (`smpte2084`, `arib-std-b67`, anything else or none).
    pub fn of_transfer(transfer: Option<&str>) -> Self {
        match transfer {
            Some("smpte2084") => DynamicRange::Pq,
            Some("arib-std-b67") => DynamicRange::Hlg,
            _ => DynamicRange::Sdr,
        }
    }

    /// Lower-case name: `"sdr"`, `"pq"` or `"hlg"`.
    pub fn as_str(self) -> &'static str {
        match self {
            DynamicRange::Sdr => "sdr",
            DynamicRange::Pq => "pq",
            DynamicRange::Hlg => "hlg",
        }
    }
}

/// A mastering display's colour volume (SMPTE ST 2086), in the units `ffprobe` prints it in: CIE 1931 x, y
/// chromaticities and candelas per square metre. A part the stream leaves out is `None`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MasteringDisplay {
    /// The red, green and blue primaries' `(x, y)`.
    pub primaries: Option<[(f64, f64); 3]>,
    /// The white point's `(x, y)`.
    pub white_point: Option<(f64, f64)>,
    /// The display's lowest luminance, cd/m².
    pub min_luminance: Option<f64>,
    /// The display's highest luminance, cd/m².
    pub max_luminance: Option<f64>,
}

/// Content light levels (CTA-861.3), cd/m².
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContentLight {
    /// The brightest pixel of the whole stream (MaxCLL).
    pub max_cll: u32,
    /// The brightest frame's average (MaxFALL).
    pub max_fall: u32,
}

/// A video stream's colour: what its samples are and how to show them. Every part is `None` when the stream
/// leaves it unspecified ([`StreamInfo::color`]).
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct ColorInfo {
    /// Bits per sample (8, 10, 12...).
    pub bit_depth: Option<u32>,
    /// Colour primaries, as FFmpeg names them (`bt709`, `bt2020`...).
    pub primaries: Option<String>,
    /// Transfer characteristics (`bt709`, `smpte2084` for PQ, `arib-std-b67` for HLG...).
    pub transfer: Option<String>,
    /// The YUV matrix (`bt709`, `bt2020nc`, `smpte170m`...).
    pub matrix: Option<String>,
    /// `tv` (limited) or `pc` (full).
    pub range: Option<String>,
    /// The mastering display, when given.
    pub mastering_display: Option<MasteringDisplay>,
    /// The content light levels, when given.
    pub content_light: Option<ContentLight>,
}

impl ColorInfo {
    /// SDR, PQ or HLG, from the transfer characteristics.
    pub fn dynamic_range(&self) -> DynamicRange {
        DynamicRange::of_transfer(self.transfer.as_deref())
    }

    /// Whether the transfer is an HDR one (PQ or HLG).
    pub fn is_hdr(&self) -> bool {
        self.dynamic_range() != DynamicRange::Sdr
    }
}

impl StreamInfo {
    /// Its colour, gathered in one value (the same as the separate fields).
    pub fn color(&self) -> ColorInfo {
        ColorInfo {
            bit_depth: self.bit_depth,
            primaries: self.color_primaries.clone(),
            transfer: self.color_transfer.clone(),
            matrix: self.color_space.clone(),
            range: self.color_range.clone(),
            mastering_display: self.mastering_display,
            content_light: self.content_light,
        }
    }

    /// SDR, PQ or HLG, from the transfer characteristics.
    pub fn dynamic_range(&self) -> DynamicRange {
        DynamicRange::of_transfer(self.color_transfer.as_deref())
    }

    /// Frames per second, when known.
    pub fn fps(&self) -> Option<f64> {
        self.frame_rate.map(|(n, d)| f64::from(n) / f64::from(d))
    }

    /// The rotation the display matrix describes, in degrees counter-clockwise (as ffprobe and TorchCodec
    /// report it: a phone video shown turned a quarter clockwise is -90); `None` without a matrix.
    pub fn rotation(&self) -> Option<f64> {
        self.display_matrix
            .as_ref()
            .and_then(crate::orientation::display_rotation)
    }

    /// How framefeed turns the stream's pictures to show them (with
    /// [`Config::autorotate`](crate::Config::autorotate), the default): [`Orientation::Upright`] without a
    /// display matrix; `None` for a matrix that is not a quarter turn or a flip (not applied).
    pub fn orientation(&self) -> Option<Orientation> {
        match &self.display_matrix {
            Some(m) => Orientation::from_display_matrix(m),
            None => Some(Orientation::Upright),
        }
    }

    /// Seconds per timestamp unit (0 for an invalid time base).
    pub(crate) fn seconds_per_unit(&self) -> f64 {
        let (num, den) = self.time_base;
        if den > 0 {
            f64::from(num) / f64::from(den)
        } else {
            0.0
        }
    }

    /// A video stream of `codec` in `pixel_format` at `width` x `height`, the rest unknown (unit tests).
    #[cfg(test)]
    pub(crate) fn video(codec: &str, pixel_format: &str, width: u32, height: u32) -> Self {
        Self {
            index: 0,
            kind: MediaKind::Video,
            codec: codec.into(),
            profile: None,
            width,
            height,
            pixel_format: Some(pixel_format.into()),
            color_space: None,
            color_range: None,
            color_primaries: None,
            color_transfer: None,
            frame_rate: None,
            time_base: (1, 25),
            duration: None,
            frames: None,
            bit_rate: None,
            default: true,
            attached_picture: false,
            display_matrix: None,
            bit_depth: Some(8),
            mastering_display: None,
            content_light: None,
            sample_rate: None,
            channels: None,
        }
    }
}

/// A container and its streams.
#[derive(Debug, Clone, PartialEq)]
pub struct ContainerInfo {
    /// FFmpeg's short demuxer name (`mov,mp4,m4a,3gp,3g2,mj2`, `matroska,webm`...).
    pub format: String,
    /// FFmpeg's long demuxer name.
    pub format_long: String,
    /// Duration in seconds, when known.
    pub duration: Option<f64>,
    /// Overall bit rate, when known.
    pub bit_rate: Option<u64>,
    /// Every stream, in container order.
    pub streams: Vec<StreamInfo>,
}

/// The FFmpeg framefeed is linked with ([`ffmpeg_build`](crate::ffmpeg_build)): the system's libraries when
/// built from source, the one carried inside the module in the self-contained wheel.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FfmpegBuild {
    /// The release, as FFmpeg names it (`"5.1.9-0+deb12u1"`, `"7.1.5"`...).
    pub version: String,
    /// The `configure` line it was built with.
    pub configuration: String,
    /// Its licence (`"LGPL version 2.1 or later"`; `"GPL version 2 or later"` for a build with GPL parts).
    pub license: String,
    /// libavcodec's version: (major, minor, micro).
    pub libavcodec: (u32, u32, u32),
    /// Its input protocols (`"file"`, `"http"`, `"https"`, `"srt"`...): a URL source needs its scheme's
    /// (RTSP is a demuxer, always there).
    pub protocols: Vec<String>,
}
