//! Planning a sequence's geometry: the resized frame size and the crop window (anchor from the reference
//! formula, a seeded random position per sequence, and the out-of-bounds policy). Pure arithmetic.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::VideoError;
use crate::settings::transforms::{Crop, CropPosition, OutOfBounds, Resize, Transforms, CHANNELS};

/// A rectangle in pixels; `x`, `y` may be negative (a padded window reaching out of the frame).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Window {
    pub(crate) x: i64,
    pub(crate) y: i64,
    pub(crate) w: usize,
    pub(crate) h: usize,
}

/// The part of a window inside its frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Visible {
    /// Left, top, width and height in frame pixels.
    pub(crate) x: usize,
    pub(crate) y: usize,
    pub(crate) w: usize,
    pub(crate) h: usize,
    /// Where it lands in the output.
    pub(crate) out_x: usize,
    pub(crate) out_y: usize,
}

/// One sequence's geometry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Geometry {
    /// The frame size after the resize (the decoded size when there is none), `(w, h)`.
    pub(crate) frame: (usize, usize),
    /// Whether a resize was applied.
    pub(crate) resized: bool,
    /// The window taken from the (resized) frame: the output size is its size.
    pub(crate) window: Window,
    /// Whether a crop was configured (or a fill/letterbox resize made one).
    pub(crate) cropped: bool,
    /// The value, per channel, of output pixels outside the frame.
    pub(crate) fill: [f32; CHANNELS],
}

impl Geometry {
    /// The part of the window inside the frame; `None` when the window misses the frame entirely.
    pub(crate) fn visible(&self) -> Option<Visible> {
        let (fw, fh) = (self.frame.0 as i64, self.frame.1 as i64);
        let w = self.window;
        let (x0, y0) = (w.x.max(0), w.y.max(0));
        let (x1, y1) = ((w.x + w.w as i64).min(fw), (w.y + w.h as i64).min(fh));
        (x1 > x0 && y1 > y0).then(|| Visible {
            x: x0 as usize,
            y: y0 as usize,
            w: (x1 - x0) as usize,
            h: (y1 - y0) as usize,
            out_x: (x0 - w.x) as usize,
            out_y: (y0 - w.y) as usize,
        })
    }

    /// Output `(w, h)`.
    pub(crate) fn out(&self) -> (usize, usize) {
        (self.window.w, self.window.h)
    }
}

/// The frame size after `resize`: exact, or the shorter side to `s` and the other in proportion (rounded,
/// at least 1).
pub(crate) fn resized_size(w: usize, h: usize, resize: Option<Resize>) -> (usize, usize) {
    let scale = |long: usize, short: usize, s: u32| -> usize {
        ((long as f64 * f64::from(s) / short as f64).round() as usize).max(1)
    };
    match resize {
        None => (w, h),
        Some(Resize::Exact { width, height }) => (width as usize, height as usize),
        Some(Resize::Shorter(s)) if w <= h => (s as usize, scale(h, w, s)),
        Some(Resize::Shorter(s)) => (scale(w, h, s), s as usize),
        Some(Resize::Fill { width, height }) => {
            let s = (f64::from(width) / w as f64).max(f64::from(height) / h as f64);
            let side = |v: usize, min: u32| ((v as f64 * s).round() as usize).max(min as usize);
            (side(w, width), side(h, height))
        }
        Some(Resize::Letterbox { width, height, .. }) => {
            let s = (f64::from(width) / w as f64).min(f64::from(height) / h as f64);
            let side =
                |v: usize, max: u32| ((v as f64 * s).round() as usize).clamp(1, max as usize);
            (side(w, width), side(h, height))
        }
    }
}

/// An output size set while running ([`VideoInput::set_output_size`](crate::VideoInput::set_output_size)),
/// shared by the operator and its planners: 0 for none, else `width << 32 | height`.
#[derive(Debug, Default)]
pub(crate) struct OutputSize(AtomicU64);

impl OutputSize {
    pub(crate) fn set(&self, width: u32, height: u32) {
        self.0.store(
            u64::from(width) << 32 | u64::from(height),
            Ordering::Release,
        );
    }

    pub(crate) fn get(&self) -> Option<(u32, u32)> {
        let v = self.0.load(Ordering::Acquire);
        (v != 0).then_some(((v >> 32) as u32, v as u32))
    }
}

/// The reference's crop anchor: `round(pos * (input - crop))`, halves away from zero (negative when the crop
/// is larger than the input).
pub(crate) fn anchor(pos: f64, input: usize, crop: usize) -> i64 {
    (pos * (input as f64 - crop as f64)).round() as i64
}

/// Plans every sequence of one video.
pub(crate) struct Planner {
    transforms: Transforms,
    rng: ChaCha8Rng,
    output_size: Arc<OutputSize>,
}

impl Planner {
    /// The planner of the video whose random stream is `video` (its place in its dataset, else its id): a
    /// sequence's random position comes from the seed, that stream and the sequence's first frame, so it does
    /// not depend on how videos interleave across threads, nor on which worker decodes which segment of the
    /// video.
    pub(crate) fn new(transforms: &Transforms, video: u64) -> Self {
        Self::with_output_size(transforms, video, Arc::default())
    }

    /// Like [`new`](Self::new), following an output size that may change while running.
    pub(crate) fn with_output_size(
        transforms: &Transforms,
        video: u64,
        output_size: Arc<OutputSize>,
    ) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(transforms.seed);
        rng.set_stream(video);
        Self {
            transforms: transforms.clone(),
            rng,
            output_size,
        }
    }

    fn unit(&mut self) -> f64 {
        (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// The geometry of the sequence starting at display index `first`, whose frames are `w` x `h` as decoded.
    pub(crate) fn plan(&mut self, w: usize, h: usize, first: u64) -> Result<Geometry, VideoError> {
        let resize = match (self.transforms.resize, self.output_size.get()) {
            (Some(r), Some(size)) => Some(r.with_target(size)),
            (r, _) => r,
        };
        let frame = resized_size(w, h, resize);
        let resized = resize.is_some();
        // Fill and letterbox end in a centred window of the output size, padded for the letterbox.
        let crop = match resize {
            Some(Resize::Fill { width, height }) => Some(Crop::new(width, height)),
            Some(Resize::Letterbox {
                width,
                height,
                fill,
            }) => Some(Crop::new(width, height).out_of_bounds(OutOfBounds::Pad(fill))),
            _ => self.transforms.crop,
        };
        let Some(crop) = crop else {
            return Ok(Geometry {
                frame,
                resized,
                window: Window {
                    x: 0,
                    y: 0,
                    w: frame.0,
                    h: frame.1,
                },
                cropped: false,
                fill: [0.0; CHANNELS],
            });
        };
        let fill = match crop.out_of_bounds {
            OutOfBounds::Pad(fill) => fill,
            _ => [0.0; CHANNELS],
        };
        let (px, py) = match crop.position {
            CropPosition::Center => (0.5, 0.5),
            CropPosition::Fixed { x, y } => (f64::from(x), f64::from(y)),
            CropPosition::Random => {
                // Two draws (four 32-bit words) a first frame.
                self.rng.set_word_pos(u128::from(first) * 4);
                (self.unit(), self.unit())
            }
        };
        let (cw, ch) = (crop.width as usize, crop.height as usize);
        if (cw > frame.0 || ch > frame.1) && crop.out_of_bounds == OutOfBounds::Error {
            return Err(VideoError::CropOutOfBounds {
                crop: (crop.width, crop.height),
                frame: (frame.0 as u32, frame.1 as u32),
            });
        }
        let axis = |pos: f64, input: usize, crop_side: usize| -> (i64, usize) {
            if crop_side > input && crop.out_of_bounds == OutOfBounds::Trim {
                (0, input)
            } else {
                (anchor(pos, input, crop_side), crop_side)
            }
        };
        let (x, w_out) = axis(px, frame.0, cw);
        let (y, h_out) = axis(py, frame.1, ch);
        Ok(Geometry {
            frame,
            resized,
            window: Window {
                x,
                y,
                w: w_out,
                h: h_out,
            },
            cropped: true,
            fill,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::Crop;
    use proptest::prelude::*;

    #[test]
    fn anchors_follow_the_reference_formula() {
        assert_eq!(anchor(0.5, 320, 224), 48);
        assert_eq!(anchor(0.0, 320, 224), 0);
        assert_eq!(anchor(1.0, 320, 224), 96);
        // Halves round away from zero: 0.5 * 5 = 2.5 -> 3; 0.5 * -5 = -2.5 -> -3.
        assert_eq!(anchor(0.5, 10, 5), 3);
        assert_eq!(anchor(0.5, 5, 10), -3);
    }

    #[test]
    fn shorter_side_resize_keeps_the_aspect_ratio() {
        assert_eq!(
            resized_size(1920, 1080, Some(Resize::Shorter(256))),
            (455, 256)
        );
        assert_eq!(
            resized_size(480, 640, Some(Resize::Shorter(256))),
            (256, 341)
        );
        assert_eq!(
            resized_size(
                100,
                100,
                Some(Resize::Exact {
                    width: 7,
                    height: 9
                })
            ),
            (7, 9)
        );
        assert_eq!(resized_size(96, 64, None), (96, 64));
    }

    fn planner(crop: Crop) -> Planner {
        Planner::new(&Transforms::new().crop(crop).seed(42), 0)
    }

    #[test]
    fn out_of_bounds_policies() {
        let err = planner(Crop::new(100, 50)).plan(96, 64, 0).unwrap_err();
        assert_eq!(
            err.to_string(),
            "crop 100x50 does not fit in the 96x64 frame (out_of_bounds policy: error)"
        );
        let pad = planner(Crop::new(100, 50).out_of_bounds(OutOfBounds::Pad([0.0; 3])))
            .plan(96, 64, 0)
            .unwrap();
        assert_eq!(
            pad.window,
            Window {
                x: -2,
                y: 7,
                w: 100,
                h: 50
            }
        );
        let v = pad.visible().unwrap();
        assert_eq!((v.x, v.y, v.w, v.h, v.out_x, v.out_y), (0, 7, 96, 50, 2, 0));
        let trim = planner(Crop::new(100, 50).out_of_bounds(OutOfBounds::Trim))
            .plan(96, 64, 0)
            .unwrap();
        assert_eq!(
            trim.window,
            Window {
                x: 0,
                y: 7,
                w: 96,
                h: 50
            }
        );
    }

    #[test]
    fn same_seed_same_windows_and_videos_get_their_own_stream() {
        let crop = Crop::new(10, 10).position(CropPosition::Random);
        let t = Transforms::new().crop(crop).seed(9);
        let windows = |video: u64| {
            let mut p = Planner::new(&t, video);
            (0..20)
                .map(|first| p.plan(64, 48, first * 8).unwrap().window)
                .collect::<Vec<_>>()
        };
        assert_eq!(windows(0), windows(0));
        assert_ne!(windows(0), windows(1));
        let distinct: std::collections::HashSet<_> = windows(0).into_iter().collect();
        assert!(
            distinct.len() > 10,
            "random windows should vary across sequences"
        );
        let other_seed = {
            let mut p = Planner::new(&t.clone().seed(10), 0);
            (0..20)
                .map(|first| p.plan(64, 48, first * 8).unwrap().window)
                .collect::<Vec<_>>()
        };
        assert_ne!(windows(0), other_seed);
        // A sequence's window depends on its first frame only, not on the sequences planned before it (so
        // a segment decoded apart gets the windows of the whole decode).
        let mut fresh = Planner::new(&t, 0);
        assert_eq!(fresh.plan(64, 48, 8 * 13).unwrap().window, windows(0)[13]);
    }

    proptest! {
        #[test]
        fn windows_fit_and_match_the_formula(
            fw in 1usize..500, fh in 1usize..500, cw in 1u32..500, ch in 1u32..500,
            px in 0.0f32..=1.0, py in 0.0f32..=1.0,
        ) {
            let crop = Crop::new(cw, ch).position(CropPosition::Fixed { x: px, y: py });
            let mut p = planner(crop);
            match p.plan(fw, fh, 0) {
                Err(_) => prop_assert!(cw as usize > fw || ch as usize > fh),
                Ok(g) => {
                    let w = g.window;
                    prop_assert_eq!((w.w, w.h), (cw as usize, ch as usize));
                    prop_assert_eq!(w.x, (f64::from(px) * (fw as f64 - f64::from(cw))).round() as i64);
                    prop_assert_eq!(w.y, (f64::from(py) * (fh as f64 - f64::from(ch))).round() as i64);
                    prop_assert!(w.x >= 0 && w.x as usize + w.w <= fw);
                    prop_assert!(w.y >= 0 && w.y as usize + w.h <= fh);
                    let v = g.visible().unwrap();
                    prop_assert_eq!((v.x, v.y, v.w, v.h, v.out_x, v.out_y), (w.x as usize, w.y as usize, w.w, w.h, 0, 0));
                }
            }
        }

        #[test]
        fn random_positions_stay_in_the_frame(fw in 1usize..300, fh in 1usize..300, seed: u64) {
            let crop = Crop::new(1 + fw as u32 / 2, 1 + fh as u32 / 2).position(CropPosition::Random);
            let mut p = Planner::new(&Transforms::new().crop(crop).seed(seed), 3);
            for first in 0..5 {
                let w = p.plan(fw, fh, first).unwrap().window;
                prop_assert!(w.x >= 0 && w.x as usize + w.w <= fw);
                prop_assert!(w.y >= 0 && w.y as usize + w.h <= fh);
            }
        }
    }
}
