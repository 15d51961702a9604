//! The transforms a user configures ([`Transforms`] and its parts: resize, crop, element type, normalization,
//! layout), validated once, apart from the code that plans and applies them (`transform`). Leaf settings:
//! batches, the config and the planner read these types.

/// Bytes per pixel of the RGB24 output.
pub const CHANNELS: usize = 3;

/// How frames are resized before the crop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Resize {
    /// To exactly `width` x `height` (the aspect ratio may change).
    Exact {
        /// Output width.
        width: u32,
        /// Output height.
        height: u32,
    },
    /// The shorter side to this many pixels, the other in proportion (rounded), as in "resize 256, crop 224".
    Shorter(u32),
    /// One output size for videos of every size, filled: resized (aspect kept) to cover `width` x `height`,
    /// then the centre `width` x `height` is kept. Not combined with a [`Crop`].
    Fill {
        /// Output width.
        width: u32,
        /// Output height.
        height: u32,
    },
    /// One output size for videos of every size, letterboxed: resized (aspect kept) to fit inside `width` x
    /// `height`, then centred and padded with `fill` (per channel, in the output's units). Not combined with
    /// a [`Crop`].
    Letterbox {
        /// Output width.
        width: u32,
        /// Output height.
        height: u32,
        /// The padding's value per channel.
        fill: [f32; CHANNELS],
    },
}

impl Resize {
    /// The output size this resize fixes, for the variants that fix one.
    pub(crate) fn target(self) -> Option<(u32, u32)> {
        match self {
            Resize::Exact { width, height }
            | Resize::Fill { width, height }
            | Resize::Letterbox { width, height, .. } => Some((width, height)),
            Resize::Shorter(_) => None,
        }
    }

    /// The same resize with its output size replaced (for the variants that have one).
    pub(crate) fn with_target(self, (w, h): (u32, u32)) -> Self {
        match self {
            Resize::Exact { .. } => Resize::Exact {
                width: w,
                height: h,
            },
            Resize::Fill { .. } => Resize::Fill {
                width: w,
                height: h,
            },
            Resize::Letterbox { fill, .. } => Resize::Letterbox {
                width: w,
                height: h,
                fill,
            },
            shorter => shorter,
        }
    }
}

/// Where a resize happens on the way from the decoder's YUV to RGB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResizeStage {
    /// The YUV planes are resized, then converted (default): the `ffmpeg` CLI's
    /// `scale=W:H:flags=F,format=yuv420p` followed by its conversion to RGB. Only the crop window's part of the
    /// resized picture is computed.
    #[default]
    Yuv,
    /// One swscale pass from the decoded picture to RGB at the new size, as FFmpeg's `scale` filter does when
    /// it writes RGB itself: the CLI's `-vf scale=W:H:flags=F -pix_fmt rgb24` (`rgb48le` for `uint16`), and
    /// decord's `width=`/`height=` (`flags=bilinear`). The whole resized frame is converted, then cropped. On
    /// the GPU the kernel resizes as [`ResizeStage::Yuv`] does; with tone mapping too.
    Rgb,
}

/// The resampling filter of a resize.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Interpolation {
    /// Nearest neighbour.
    Nearest,
    /// Bilinear (default).
    #[default]
    Bilinear,
    /// Bicubic.
    Bicubic,
    /// Area averaging (antialiased downscaling).
    Area,
}

/// Where the crop window sits.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum CropPosition {
    /// Centred (`crop_pos_x = crop_pos_y = 0.5`).
    #[default]
    Center,
    /// Normalized position in [0, 1] on each axis: the anchor is `round(pos * (in - crop))`, halves away from
    /// zero (the reference's `crop_pos_x`, `crop_pos_y`).
    Fixed {
        /// Horizontal position, 0 = left, 1 = right.
        x: f32,
        /// Vertical position, 0 = top, 1 = bottom.
        y: f32,
    },
    /// A position drawn uniformly in [0, 1) on each axis for every sequence, from the seeded generator
    /// ([`Transforms::seed`]): the same seed and feeding order give the same windows.
    Random,
}

impl std::str::FromStr for CropPosition {
    type Err = String;

    /// `center` (or `centre`), `random`, or `X,Y` in [0, 1] (the `crop_pos` setting).
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("center") || s.eq_ignore_ascii_case("centre") {
            return Ok(CropPosition::Center);
        }
        if s.eq_ignore_ascii_case("random") {
            return Ok(CropPosition::Random);
        }
        // The range is checked with the rest of the transforms (`Transforms::validate`).
        let unit = |v: &str| v.trim().parse::<f32>().ok();
        match s.split_once(',').map(|(x, y)| (unit(x), unit(y))) {
            Some((Some(x), Some(y))) => Ok(CropPosition::Fixed { x, y }),
            _ => Err(format!(
                "crop_pos is '{s}'; allowed: 'center', 'random' or X,Y (numbers in [0, 1])"
            )),
        }
    }
}

impl std::fmt::Display for CropPosition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CropPosition::Center => f.write_str("center"),
            CropPosition::Random => f.write_str("random"),
            CropPosition::Fixed { x, y } => write!(f, "{x},{y}"),
        }
    }
}

/// What a crop larger than the (resized) frame does.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum OutOfBounds {
    /// The video fails with [`VideoError::CropOutOfBounds`](crate::VideoError), naming both shapes (default).
    #[default]
    Error,
    /// The window keeps its size; pixels outside the frame take these values (per channel, in the output's
    /// units: 0-255 levels for u8, the float value itself for f32).
    Pad([f32; CHANNELS]),
    /// The window is cut to the frame on each axis where it is larger.
    Trim,
}

/// A crop window of a fixed size, the same for every frame of a sequence.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Crop {
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(crate) position: CropPosition,
    pub(crate) out_of_bounds: OutOfBounds,
}

impl Crop {
    /// A centred `width` x `height` crop that fails videos smaller than it.
    pub fn new(width: u32, height: u32) -> Self {
        Self {
            width,
            height,
            position: CropPosition::Center,
            out_of_bounds: OutOfBounds::Error,
        }
    }

    /// Where the window sits (default centred).
    pub fn position(mut self, position: CropPosition) -> Self {
        self.position = position;
        self
    }

    /// What a window larger than the frame does (default: the video fails).
    pub fn out_of_bounds(mut self, policy: OutOfBounds) -> Self {
        self.out_of_bounds = policy;
        self
    }
}

/// The element type of the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DType {
    /// 8-bit levels 0-255 (default).
    #[default]
    U8,
    /// 16-bit levels 0-65535 (RGB48): for sources of more than 8 bits a sample, exactly the values of `ffmpeg
    /// -pix_fmt rgb48le`; for 8-bit sources the 8-bit levels widened exactly (`level * 257`, so that
    /// `u16 / 65535 == u8 / 255`). Not normalized.
    U16,
    /// 32-bit floats: the levels on the 0.0-255.0 scale, then normalized if asked. Sources of more than 8 bits a
    /// sample keep their precision: the RGB48 level / 257 (the `U16` value on the 0-255 scale); 8-bit sources
    /// give the 8-bit level.
    F32,
    /// 32-bit floats scaled to [0, 1], then normalized if asked: the RGB48 level / 65535 for sources of more
    /// than 8 bits a sample, the 8-bit level / 255 otherwise.
    F32Unit,
    /// 16-bit floats ([`half::f16`](crate::f16)): as [`DType::F32`], rounded to `f16`.
    F16,
    /// 16-bit floats scaled to [0, 1]: as [`DType::F32Unit`], rounded to `f16`.
    F16Unit,
}

impl DType {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::U8 => 1,
            DType::U16 | DType::F16 | DType::F16Unit => 2,
            DType::F32 | DType::F32Unit => 4,
        }
    }
}

/// The tone-mapping curve of [`ToneMap`], named as the `ffmpeg` `tonemap` filter names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToneMapOp {
    /// John Hable's filmic curve (Uncharted 2): keeps detail in dark and bright parts.
    Hable,
    /// Möbius: exact below `param` (default 0.3), smoothly compressed above it.
    Mobius,
    /// Reinhard: `x / (x + p) * (peak + p) / peak`, with `p` from `param` (the local contrast, default 0.5).
    Reinhard,
    /// Hard clip at SDR white, after scaling by `param` (default 1).
    Clip,
}

/// HDR to SDR, fused into the conversion: frames whose transfer is PQ (SMPTE ST 2084) or HLG (ARIB STD-B67) are
/// linearised (the nominal peak luminance at 100 cd/m²), taken from their primaries (BT.2020) to BT.709,
/// desaturated where brighter than `desat`, tone-mapped by `op` with the signal peak `peak`, and given the
/// BT.709 display transfer (gamma 2.4), as the `ffmpeg` chain
/// `zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=OP,zscale=t=bt709:m=bt709:r=tv` does.
/// Frames of other transfers (SDR) are converted as without it.
///
/// Parsed from the `tonemap` filter's spelling, `OP[:peak=P][:desat=D][:param=X]`:
///
/// ```
/// use framefeed::{ToneMap, ToneMapOp};
/// let t: ToneMap = "hable".parse().unwrap();
/// assert_eq!(t, ToneMap::new(ToneMapOp::Hable));
/// let t: ToneMap = "mobius:peak=12:desat=0:param=0.4".parse().unwrap();
/// assert_eq!((t.op(), t.peak(), t.desat(), t.param()), (ToneMapOp::Mobius, Some(12.0), 0.0, Some(0.4)));
/// assert_eq!(t.to_string(), "mobius:peak=12:desat=0:param=0.4");
/// assert!("filmic".parse::<ToneMap>().unwrap_err().contains("allowed: 'hable', 'mobius', 'reinhard', 'clip'"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToneMap {
    pub(crate) op: ToneMapOp,
    pub(crate) peak: Option<f32>,
    pub(crate) desat: f32,
    pub(crate) param: Option<f32>,
}

impl ToneMap {
    /// The default desaturation strength (the `tonemap` filter's).
    pub const DEFAULT_DESAT: f32 = 2.0;

    /// Tone mapping by `op`, the peak read from each frame, desaturation 2, the curve's own parameter.
    pub fn new(op: ToneMapOp) -> Self {
        Self {
            op,
            peak: None,
            desat: Self::DEFAULT_DESAT,
            param: None,
        }
    }

    /// The signal peak, in units of 100 cd/m² (10 = 1000 cd/m²). Default: each frame's MaxCLL, else its
    /// mastering display's peak luminance (divided by 100), else 10, as the `tonemap` filter reads them after
    /// `zscale` has linearised the frame.
    pub fn with_peak(mut self, peak: f32) -> Self {
        self.peak = Some(peak);
        self
    }

    /// How strongly colours brighter than this (linear, units of 100 cd/m²) are pulled toward white, so that
    /// tone mapping does not make them unnaturally saturated; 0 turns it off. Default 2.
    pub fn with_desat(mut self, desat: f32) -> Self {
        self.desat = desat;
        self
    }

    /// The curve's parameter (Möbius: the linear part's end, default 0.3; Reinhard: the local contrast, default
    /// 0.5; Clip: the scale, default 1; Hable: none).
    pub fn with_param(mut self, param: f32) -> Self {
        self.param = Some(param);
        self
    }

    /// The curve.
    pub fn op(&self) -> ToneMapOp {
        self.op
    }

    /// The signal peak set, if any (else each frame's).
    pub fn peak(&self) -> Option<f32> {
        self.peak
    }

    /// The desaturation strength.
    pub fn desat(&self) -> f32 {
        self.desat
    }

    /// The curve's parameter set, if any.
    pub fn param(&self) -> Option<f32> {
        self.param
    }

    /// Checks the values, naming the first one out of range.
    pub(crate) fn validate(&self) -> Result<(), String> {
        if let Some(peak) = self.peak {
            if !(peak.is_finite() && (0.01..=100.0).contains(&peak)) {
                return Err(format!(
                    "tonemap peak is {peak}; allowed: 0.01 to 100 (units of 100 cd/m²)"
                ));
            }
        }
        if !(self.desat.is_finite() && (0.0..=100.0).contains(&self.desat)) {
            return Err(format!(
                "tonemap desat is {}; allowed: 0 to 100",
                self.desat
            ));
        }
        if let Some(param) = self.param {
            let ok = match self.op {
                ToneMapOp::Reinhard | ToneMapOp::Mobius => param > 0.0 && param < 1.0,
                ToneMapOp::Clip => param > 0.0 && param <= 100.0,
                ToneMapOp::Hable => false,
            };
            if !(param.is_finite() && ok) {
                let allowed = match self.op {
                    ToneMapOp::Reinhard | ToneMapOp::Mobius => "above 0 and below 1",
                    ToneMapOp::Clip => "above 0, up to 100",
                    ToneMapOp::Hable => "none (hable takes no param)",
                };
                return Err(format!(
                    "tonemap param is {param} for {}; allowed: {allowed}",
                    self.op
                ));
            }
        }
        Ok(())
    }
}

impl std::str::FromStr for ToneMap {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let mut parts = s.split(':');
        let op: ToneMapOp = parts.next().unwrap_or_default().parse()?;
        let mut t = ToneMap::new(op);
        for part in parts {
            let (key, value) = part.split_once('=').ok_or_else(|| {
                format!(
                    "tonemap option '{part}' is not KEY=VALUE; allowed keys: peak, desat, param"
                )
            })?;
            let number: f32 = value
                .trim()
                .parse()
                .map_err(|_| format!("tonemap {key} is '{value}'; allowed: a number"))?;
            t = match key.trim() {
                "peak" => t.with_peak(number),
                "desat" => t.with_desat(number),
                "param" => t.with_param(number),
                other => {
                    return Err(format!(
                        "tonemap option '{other}' is unknown; allowed keys: peak, desat, param"
                    ))
                }
            };
        }
        t.validate()?;
        Ok(t)
    }
}

impl std::fmt::Display for ToneMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.op)?;
        if let Some(peak) = self.peak {
            write!(f, ":peak={peak}")?;
        }
        if self.desat != Self::DEFAULT_DESAT {
            write!(f, ":desat={}", self.desat)?;
        }
        if let Some(param) = self.param {
            write!(f, ":param={param}")?;
        }
        Ok(())
    }
}

/// The memory layout of a sequence (a batch adds a leading N).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// Frames, rows, columns, channels (default; frames are contiguous RGB images).
    #[default]
    Fhwc,
    /// Frames, channels, rows, columns (each frame is contiguous, as planes).
    Fchw,
    /// Channels, frames, rows, columns (the layout of video models such as 3D CNNs).
    Cfhw,
}

impl Layout {
    /// The shape of a sequence of `f` frames of `h` x `w` in this layout.
    pub fn shape(self, f: usize, h: usize, w: usize) -> [usize; 4] {
        match self {
            Layout::Fhwc => [f, h, w, CHANNELS],
            Layout::Fchw => [f, CHANNELS, h, w],
            Layout::Cfhw => [CHANNELS, f, h, w],
        }
    }

    /// The element index of `(frame, channel, row, column)` in a sequence of `(frames, h, w)`.
    #[inline]
    pub(crate) fn index(
        self,
        dims: (usize, usize, usize),
        at: (usize, usize, usize, usize),
    ) -> usize {
        let (frames, h, w) = dims;
        let (f, c, y, x) = at;
        match self {
            Layout::Fhwc => ((f * h + y) * w + x) * CHANNELS + c,
            Layout::Fchw => ((f * CHANNELS + c) * h + y) * w + x,
            Layout::Cfhw => ((c * frames + f) * h + y) * w + x,
        }
    }
}

/// Per-channel normalization: `(value - mean) / std`, in the units of the chosen [`DType`] (0-255 for
/// [`DType::F32`], 0-1 for [`DType::F32Unit`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Normalize {
    /// Per-channel mean (R, G, B).
    pub mean: [f32; CHANNELS],
    /// Per-channel standard deviation (R, G, B), each non-zero.
    pub std: [f32; CHANNELS],
}

/// The transforms applied to every sequence, configured once with [`Config::transforms`](crate::Config).
/// Order: resize, then crop (in the resized frame's pixels), then type, normalization and layout. The crop and
/// resize happen while converting from the decoder's YUV planes: pixels cropped away are never converted.
///
/// ```
/// use framefeed::{Config, Crop, CropPosition, DType, Layout, Resize, Transforms, VideoInput};
/// let transforms = Transforms::new()
///     .resize(Resize::Shorter(128))
///     .crop(Crop::new(112, 112).position(CropPosition::Random))
///     .dtype(DType::F32Unit)
///     .normalize([0.45, 0.45, 0.45], [0.225, 0.225, 0.225])
///     .layout(Layout::Cfhw)
///     .seed(7);
/// let input = VideoInput::new(Config::new(8, 2).transforms(transforms))?;
/// input.feed(framefeed::SAMPLE_MP4)?;
/// input.close();
/// let batch = input.next_batch()?.unwrap();
/// assert_eq!(batch.shape(), Some([2, 3, 8, 112, 112])); // N, C, F, H, W
/// let floats: &[f32] = batch.data_f32().unwrap();
/// assert_eq!(floats.len(), 2 * 3 * 8 * 112 * 112);
/// # Ok::<(), framefeed::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Transforms {
    pub(crate) resize: Option<Resize>,
    pub(crate) interpolation: Interpolation,
    pub(crate) resize_stage: ResizeStage,
    pub(crate) crop: Option<Crop>,
    pub(crate) dtype: DType,
    pub(crate) normalize: Option<Normalize>,
    pub(crate) layout: Layout,
    pub(crate) seed: u64,
    pub(crate) tonemap: Option<ToneMap>,
}

impl Transforms {
    /// No transform: full frames, u8, FHWC.
    pub fn new() -> Self {
        Self::default()
    }

    /// Resize every frame before the crop.
    pub fn resize(mut self, resize: Resize) -> Self {
        self.resize = Some(resize);
        self
    }

    /// The resize filter (default bilinear).
    pub fn interpolation(mut self, interpolation: Interpolation) -> Self {
        self.interpolation = interpolation;
        self
    }

    /// Where the resize happens (default [`ResizeStage::Yuv`]).
    pub fn resize_stage(mut self, stage: ResizeStage) -> Self {
        self.resize_stage = stage;
        self
    }

    /// Crop one window per sequence.
    pub fn crop(mut self, crop: Crop) -> Self {
        self.crop = Some(crop);
        self
    }

    /// HDR to SDR for frames whose transfer is PQ or HLG (default: none, the transfer left as it is).
    pub fn tonemap(mut self, tonemap: ToneMap) -> Self {
        self.tonemap = Some(tonemap);
        self
    }

    /// The element type (default u8).
    pub fn dtype(mut self, dtype: DType) -> Self {
        self.dtype = dtype;
        self
    }

    /// Per-channel normalization (needs a float [`DType`]).
    pub fn normalize(mut self, mean: [f32; CHANNELS], std: [f32; CHANNELS]) -> Self {
        self.normalize = Some(Normalize { mean, std });
        self
    }

    /// The layout of each sequence (default FHWC).
    pub fn layout(mut self, layout: Layout) -> Self {
        self.layout = layout;
        self
    }

    /// The seed of the random crop positions (default 0).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The output frame size these transforms always give, when they fix one: a crop that keeps its size
    /// (any policy but [`OutOfBounds::Trim`]), else a resize to a given size. `None`: it follows the video.
    pub(crate) fn fixed_output_size(&self) -> Option<(u32, u32)> {
        match (&self.crop, self.resize) {
            (Some(c), _) if c.out_of_bounds != OutOfBounds::Trim => Some((c.width, c.height)),
            (Some(_), _) => None,
            (None, Some(r)) => r.target(),
            (None, None) => None,
        }
    }

    /// Whether frames are output as decoded: full size, u8, FHWC.
    pub(crate) fn is_identity(&self) -> bool {
        self.resize.is_none()
            && self.crop.is_none()
            && self.dtype == DType::U8
            && self.normalize.is_none()
            && self.layout == Layout::Fhwc
            && self.tonemap.is_none()
    }

    /// Checks the values, naming the first one out of range.
    pub(crate) fn validate(&self, max_dimension: u32) -> Result<(), String> {
        let side = |name: &str, v: u32| {
            if v == 0 || v > max_dimension {
                Err(format!("{name} is {v}; allowed: 1 to {max_dimension}"))
            } else {
                Ok(())
            }
        };
        match self.resize {
            Some(Resize::Shorter(s)) => side("resize shorter side", s)?,
            Some(r) => {
                let (width, height) = r.target().expect("sized variants");
                side("resize width", width)?;
                side("resize height", height)?;
                if let Resize::Letterbox { fill, .. } = r {
                    if fill.iter().any(|v| !v.is_finite()) {
                        return Err(format!("letterbox fill values {fill:?} must be finite"));
                    }
                }
                if matches!(r, Resize::Fill { .. } | Resize::Letterbox { .. })
                    && self.crop.is_some()
                {
                    return Err(
                        "Resize::Fill and Resize::Letterbox set the output size themselves; allowed: no crop with them"
                            .into(),
                    );
                }
            }
            None => {}
        }
        if let Some(crop) = &self.crop {
            side("crop width", crop.width)?;
            side("crop height", crop.height)?;
            if let CropPosition::Fixed { x, y } = crop.position {
                for (name, v) in [("crop position x", x), ("crop position y", y)] {
                    if !(0.0..=1.0).contains(&v) {
                        return Err(format!("{name} is {v}; allowed: 0 to 1"));
                    }
                }
            }
            if let OutOfBounds::Pad(fill) = crop.out_of_bounds {
                if fill.iter().any(|v| !v.is_finite()) {
                    return Err(format!("crop fill values {fill:?} must be finite"));
                }
            }
        }
        if let Some(t) = &self.tonemap {
            t.validate()?;
        }
        if let Some(n) = &self.normalize {
            if matches!(self.dtype, DType::U8 | DType::U16) {
                return Err(format!(
                    "normalize needs a float dtype, not {}; allowed with: float32, float32_unit, float16, float16_unit",
                    self.dtype
                ));
            }
            if n.std.iter().any(|s| *s == 0.0 || !s.is_finite())
                || n.mean.iter().any(|m| !m.is_finite())
            {
                return Err(format!(
                    "normalize std {:?} must be finite and non-zero, mean {:?} finite",
                    n.std, n.mean
                ));
            }
        }
        Ok(())
    }
}

super::choice::choices!(Interpolation, "interpolation", [
    Interpolation::Bilinear => "bilinear",
    Interpolation::Nearest => "nearest",
    Interpolation::Bicubic => "bicubic",
    Interpolation::Area => "area",
]);
super::choice::choices!(ResizeStage, "resize_stage", [
    ResizeStage::Yuv => "yuv",
    ResizeStage::Rgb => "rgb",
]);
super::choice::choices!(DType, "dtype", [
    DType::U8 => "uint8" | "u8",
    DType::U16 => "uint16" | "u16",
    DType::F32 => "float32" | "f32",
    DType::F16 => "float16" | "f16",
    DType::F32Unit => "float32_unit" | "f32-unit" | "f32_unit",
    DType::F16Unit => "float16_unit" | "f16-unit" | "f16_unit",
]);
super::choice::choices!(ToneMapOp, "tonemap", [
    ToneMapOp::Hable => "hable",
    ToneMapOp::Mobius => "mobius",
    ToneMapOp::Reinhard => "reinhard",
    ToneMapOp::Clip => "clip",
]);
super::choice::choices!(Layout, "layout", [
    Layout::Fhwc => "FHWC",
    Layout::Fchw => "FCHW",
    Layout::Cfhw => "CFHW",
]);
super::choice::choices!(OutOfBoundsMode, "out_of_bounds", [
    OutOfBoundsMode::Error => "error",
    OutOfBoundsMode::Pad => "pad",
    OutOfBoundsMode::Trim => "trim",
]);
super::choice::choices!(ResizeMode, "resize_mode", [
    ResizeMode::Exact => "exact",
    ResizeMode::Fill => "fill",
    ResizeMode::Letterbox => "letterbox",
]);

/// How a [`Resize`] to a width and height treats the aspect ratio (the `resize_mode` setting of the front
/// ends; [`Resize::with_mode`] makes the resize).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResizeMode {
    /// [`Resize::Exact`] (the default).
    #[default]
    Exact,
    /// [`Resize::Fill`].
    Fill,
    /// [`Resize::Letterbox`].
    Letterbox,
}

impl Resize {
    /// The resize to `width` x `height` of `mode`; `fill` is the letterbox's colour (R, G, B levels).
    pub fn with_mode(mode: ResizeMode, width: u32, height: u32, fill: [f32; 3]) -> Self {
        match mode {
            ResizeMode::Exact => Resize::Exact { width, height },
            ResizeMode::Fill => Resize::Fill { width, height },
            ResizeMode::Letterbox => Resize::Letterbox {
                width,
                height,
                fill,
            },
        }
    }
}

/// [`OutOfBounds`] by name, for the front ends' `out_of_bounds` setting (its `pad` takes the `fill` setting:
/// [`OutOfBounds::with_mode`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutOfBoundsMode {
    /// [`OutOfBounds::Error`] (the default).
    #[default]
    Error,
    /// [`OutOfBounds::Pad`].
    Pad,
    /// [`OutOfBounds::Trim`].
    Trim,
}

impl OutOfBounds {
    /// The policy of `mode`; `fill` is what [`OutOfBounds::Pad`] pads with.
    pub fn with_mode(mode: OutOfBoundsMode, fill: [f32; CHANNELS]) -> Self {
        match mode {
            OutOfBoundsMode::Error => OutOfBounds::Error,
            OutOfBoundsMode::Pad => OutOfBounds::Pad(fill),
            OutOfBoundsMode::Trim => OutOfBounds::Trim,
        }
    }
}

/// The transforms as flat, optional settings, as the front ends take them (the CLI's flags, the service's JSON,
/// Python's keywords): each front end fills this and [`Transforms::try_from`] builds and checks the transforms
/// once, with one message for each conflict. A `None` is the default.
///
/// ```
/// use framefeed::{Resize, TransformOptions, Transforms};
/// let options = TransformOptions { resize_shorter: Some(128), seed: Some(7), ..Default::default() };
/// assert_eq!(Transforms::try_from(options)?, Transforms::new().resize(Resize::Shorter(128)).seed(7));
/// let both = TransformOptions { resize: Some((64, 64)), resize_shorter: Some(128), ..Default::default() };
/// assert!(Transforms::try_from(both).unwrap_err().to_string().contains("resize and resize_shorter are exclusive"));
/// # Ok::<(), framefeed::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TransformOptions {
    /// A resize to (width, height), by [`resize_mode`](Self::resize_mode).
    pub resize: Option<(u32, u32)>,
    /// [`Resize::Shorter`]; not with `resize`.
    pub resize_shorter: Option<u32>,
    /// How `resize` treats the aspect ratio (default [`ResizeMode::Exact`]).
    pub resize_mode: Option<ResizeMode>,
    /// The letterbox's colour and the crop's pad values (default black: 0, 0, 0).
    pub fill: Option<[f32; CHANNELS]>,
    /// [`Transforms::interpolation`].
    pub interpolation: Option<Interpolation>,
    /// [`Transforms::resize_stage`].
    pub resize_stage: Option<ResizeStage>,
    /// A crop window of (width, height).
    pub crop: Option<(u32, u32)>,
    /// Where the crop window lies (default [`CropPosition::Center`]); only with `crop`.
    pub crop_pos: Option<CropPosition>,
    /// What a crop larger than the frame does (default [`OutOfBoundsMode::Error`]); only with `crop`.
    pub out_of_bounds: Option<OutOfBoundsMode>,
    /// [`Transforms::dtype`].
    pub dtype: Option<DType>,
    /// [`Transforms::normalize`]: (mean, std) per channel.
    pub normalize: Option<([f32; CHANNELS], [f32; CHANNELS])>,
    /// [`Transforms::layout`].
    pub layout: Option<Layout>,
    /// [`Transforms::seed`] (default 0).
    pub seed: Option<u64>,
    /// [`Transforms::tonemap`] (default none).
    pub tonemap: Option<ToneMap>,
}

impl TryFrom<TransformOptions> for Transforms {
    type Error = crate::error::Error;

    fn try_from(o: TransformOptions) -> Result<Self, Self::Error> {
        let fill = o.fill.unwrap_or([0.0; CHANNELS]);
        let mut t = Transforms::new();
        match (o.resize, o.resize_shorter) {
            (Some(_), Some(_)) => {
                return Err(crate::error::Error::Config(
                    "resize and resize_shorter are exclusive; give one of them".into(),
                ))
            }
            (Some((width, height)), None) => {
                let mode = o.resize_mode.unwrap_or_default();
                t = t.resize(Resize::with_mode(mode, width, height, fill));
            }
            (None, Some(side)) => t = t.resize(Resize::Shorter(side)),
            (None, None) => {}
        }
        if let Some((width, height)) = o.crop {
            let policy = OutOfBounds::with_mode(o.out_of_bounds.unwrap_or_default(), fill);
            t = t.crop(
                Crop::new(width, height)
                    .position(o.crop_pos.unwrap_or_default())
                    .out_of_bounds(policy),
            );
        }
        if let Some((mean, std)) = o.normalize {
            t = t.normalize(mean, std);
        }
        if let Some(tonemap) = o.tonemap {
            t = t.tonemap(tonemap);
        }
        Ok(t.interpolation(o.interpolation.unwrap_or_default())
            .resize_stage(o.resize_stage.unwrap_or_default())
            .dtype(o.dtype.unwrap_or_default())
            .layout(o.layout.unwrap_or_default())
            .seed(o.seed.unwrap_or(0)))
    }
}
