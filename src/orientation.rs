//! How a video asks to be shown: its display matrix (nine 32-bit fixed-point numbers, from the container's
//! stream or from a frame's side data, as phones write them) read as one of the eight quarter turns and flips
//! of the picture, exactly as the `ffmpeg` CLI reads it when it autorotates (FFmpeg 5.1's `get_rotation` and
//! the filters `fftools/ffmpeg_filter.c` inserts: `transpose`, `hflip`, `vflip`). Pure arithmetic; the CPU
//! path applies it to a frame's planes (`transform::orient`), the CUDA kernel while it reads the surface.

/// The turn or flip that shows a decoded picture upright: what framefeed applies to every frame of a video
/// with a display matrix (unless [`Config::autorotate`](crate::Config::autorotate) is off), before the resize
/// and crop. Named for what it does to the coded picture.
///
/// ```
/// use framefeed::Orientation;
/// // A phone held upright records sideways; its matrix asks for a quarter turn clockwise.
/// let matrix = [0, 65536, 0, -65536, 0, 0, 0, 0, 1 << 30];
/// let o = Orientation::from_display_matrix(&matrix).unwrap();
/// assert_eq!(o, Orientation::Rotate90);
/// assert_eq!(o.displayed_size(1920, 1080), (1080, 1920));
/// assert_eq!(framefeed::display_rotation(&matrix), Some(-90.0)); // counter-clockwise, as ffprobe prints it
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Orientation {
    /// Shown as decoded (no display matrix, or one that asks for nothing).
    #[default]
    Upright,
    /// Turned a quarter clockwise (ffmpeg's `transpose=clock`).
    Rotate90,
    /// Turned a half (ffmpeg's `hflip` then `vflip`).
    Rotate180,
    /// Turned a quarter counter-clockwise (ffmpeg's `transpose=cclock`).
    Rotate270,
    /// Mirrored left to right (ffmpeg's `hflip`).
    FlipHorizontal,
    /// Mirrored top to bottom (ffmpeg's `vflip`).
    FlipVertical,
    /// Mirrored across the main diagonal: rows become columns (ffmpeg's `transpose=cclock_flip`).
    Transpose,
    /// Mirrored across the other diagonal (ffmpeg's `transpose=clock_flip`).
    Transverse,
}

/// The rotation a display matrix describes, in degrees counter-clockwise (FFmpeg's
/// `av_display_rotation_get`, the `rotation` ffprobe and TorchCodec report); `None` for a degenerate matrix.
pub fn display_rotation(matrix: &[i32; 9]) -> Option<f64> {
    let fixed = |v: i32| f64::from(v) / 65536.0;
    let scale = [
        fixed(matrix[0]).hypot(fixed(matrix[3])),
        fixed(matrix[1]).hypot(fixed(matrix[4])),
    ];
    if scale[0] == 0.0 || scale[1] == 0.0 {
        return None;
    }
    let rotation = (fixed(matrix[1]) / scale[1])
        .atan2(fixed(matrix[0]) / scale[0])
        .to_degrees();
    Some(-rotation)
}

impl Orientation {
    /// Every orientation, [`Upright`](Self::Upright) first.
    pub const ALL: [Orientation; 8] = [
        Orientation::Upright,
        Orientation::Rotate90,
        Orientation::Rotate180,
        Orientation::Rotate270,
        Orientation::FlipHorizontal,
        Orientation::FlipVertical,
        Orientation::Transpose,
        Orientation::Transverse,
    ];

    /// What the `ffmpeg` CLI applies for this display matrix; `None` when the matrix is not a quarter turn (a
    /// turn by another angle, which ffmpeg draws rotated into the same frame size, framefeed does not apply).
    pub fn from_display_matrix(matrix: &[i32; 9]) -> Option<Orientation> {
        // FFmpeg 5.1's get_rotation: the clockwise angle, rounded to a degree, in [0, 360) (with 359.1..360
        // taken as 0).
        let theta = display_rotation(matrix).map_or(0.0, |r| -r.round());
        let theta = theta - 360.0 * (theta / 360.0 + 0.9 / 360.0).floor();
        let near = |angle: f64| (theta - angle).abs() < 1.0;
        Some(if near(90.0) {
            if matrix[3] > 0 {
                Orientation::Transpose
            } else {
                Orientation::Rotate90
            }
        } else if near(180.0) {
            match (matrix[0] < 0, matrix[4] < 0) {
                (true, true) => Orientation::Rotate180,
                (true, false) => Orientation::FlipHorizontal,
                (false, true) => Orientation::FlipVertical,
                (false, false) => Orientation::Upright,
            }
        } else if near(270.0) {
            if matrix[3] < 0 {
                Orientation::Transverse
            } else {
                Orientation::Rotate270
            }
        } else if theta.abs() > 1.0 {
            return None;
        } else if matrix[4] < 0 {
            Orientation::FlipVertical
        } else {
            Orientation::Upright
        })
    }

    /// The name the front ends print: `none`, `rotate90`, `rotate180`, `rotate270`, `hflip`, `vflip`,
    /// `transpose`, `transverse`.
    pub fn as_str(self) -> &'static str {
        match self {
            Orientation::Upright => "none",
            Orientation::Rotate90 => "rotate90",
            Orientation::Rotate180 => "rotate180",
            Orientation::Rotate270 => "rotate270",
            Orientation::FlipHorizontal => "hflip",
            Orientation::FlipVertical => "vflip",
            Orientation::Transpose => "transpose",
            Orientation::Transverse => "transverse",
        }
    }

    /// Whether rows become columns (a quarter turn or a diagonal mirror): the shown picture is `height` wide.
    pub fn swaps_sides(self) -> bool {
        self.steps().transpose
    }

    /// The shown size of a `width` x `height` picture.
    pub fn displayed_size<T>(self, width: T, height: T) -> (T, T) {
        if self.swaps_sides() {
            (height, width)
        } else {
            (width, height)
        }
    }

    /// The steps that take a shown pixel back to the coded picture, in the kernel's bits: 1 mirrors the shown
    /// column, 2 the shown row, 4 then swaps column and row (see [`Steps`]).
    pub(crate) fn code(self) -> i32 {
        let s = self.steps();
        i32::from(s.flip_x) | i32::from(s.flip_y) << 1 | i32::from(s.transpose) << 2
    }

    pub(crate) fn steps(self) -> Steps {
        let (flip_x, flip_y, transpose) = match self {
            Orientation::Upright => (false, false, false),
            Orientation::Rotate90 => (true, false, true),
            Orientation::Rotate180 => (true, true, false),
            Orientation::Rotate270 => (false, true, true),
            Orientation::FlipHorizontal => (true, false, false),
            Orientation::FlipVertical => (false, true, false),
            Orientation::Transpose => (false, false, true),
            Orientation::Transverse => (true, true, true),
        };
        Steps {
            flip_x,
            flip_y,
            transpose,
        }
    }
}

impl std::fmt::Display for Orientation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a shown pixel comes from: in a shown plane of `w` x `h`, pixel `(x, y)` is the coded plane's
/// `(x', y')` with `x' = w - 1 - x` when `flip_x` (else `x`), `y'` likewise with `flip_y`, then the two
/// swapped when `transpose`. The CPU path and the CUDA kernel read the coded planes this way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Steps {
    pub(crate) flip_x: bool,
    pub(crate) flip_y: bool,
    pub(crate) transpose: bool,
}

impl Steps {
    /// The coded `(column, row)` of shown pixel `(x, y)` of a shown plane `w` x `h`.
    pub(crate) fn source(self, x: usize, y: usize, w: usize, h: usize) -> (usize, usize) {
        let x = if self.flip_x { w - 1 - x } else { x };
        let y = if self.flip_y { h - 1 - y } else { y };
        if self.transpose {
            (y, x)
        } else {
            (x, y)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// FFmpeg's `av_display_rotation_set` (clockwise `angle`) then `av_display_matrix_flip`.
    fn matrix(angle: f64, hflip: bool, vflip: bool) -> [i32; 9] {
        let r = (-angle).to_radians();
        let fixed = |v: f64| (v * 65536.0).round() as i32;
        let mut m = [
            fixed(r.cos()),
            fixed(-r.sin()),
            0,
            fixed(r.sin()),
            fixed(r.cos()),
            0,
            0,
            0,
            1 << 30,
        ];
        let flip = [if hflip { -1 } else { 1 }, if vflip { -1 } else { 1 }, 1];
        for (i, v) in m.iter_mut().enumerate() {
            *v *= flip[i % 3];
        }
        m
    }

    /// The shown picture of a coded `w` x `h` one, by the steps, pixel by pixel.
    fn shown(o: Orientation, coded: &[Vec<u32>]) -> Vec<Vec<u32>> {
        let (h, w) = (coded.len(), coded[0].len());
        let (sw, sh) = o.displayed_size(w, h);
        (0..sh)
            .map(|y| {
                (0..sw)
                    .map(|x| {
                        let (cx, cy) = o.steps().source(x, y, sw, sh);
                        coded[cy][cx]
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn matrices_read_as_ffmpeg_reads_them() {
        // av_display_rotation_set(m, a) describes a clockwise turn by `a`, which the CLI applies; a matrix of
        // -90 (what FFmpeg 5.1's `-metadata:s:v rotate=90` writes) is a quarter turn counter-clockwise. The
        // same files through the CLI: tests/conformance.rs.
        let cases = [
            (0.0, false, false, Orientation::Upright),
            (90.0, false, false, Orientation::Rotate90),
            (-90.0, false, false, Orientation::Rotate270),
            (180.0, false, false, Orientation::Rotate180),
            (-180.0, false, false, Orientation::Rotate180),
            (270.0, false, false, Orientation::Rotate270),
            (0.0, true, false, Orientation::FlipHorizontal),
            (0.0, false, true, Orientation::FlipVertical),
            (0.0, true, true, Orientation::Rotate180),
            (90.0, true, false, Orientation::Transpose),
            (-90.0, true, false, Orientation::Transverse),
            (45.0, false, false, Orientation::Upright),
        ];
        for (angle, h, v, want) in cases {
            let m = matrix(angle, h, v);
            let got = Orientation::from_display_matrix(&m);
            if angle == 45.0 {
                assert_eq!(got, None, "an odd angle is not applied");
            } else {
                assert_eq!(got, Some(want), "angle {angle}, hflip {h}, vflip {v}");
            }
        }
        assert_eq!(display_rotation(&matrix(-90.0, false, false)), Some(90.0));
        assert_eq!(display_rotation(&[0; 9]), None);
        assert_eq!(
            Orientation::from_display_matrix(&[0; 9]),
            Some(Orientation::Upright),
            "a degenerate matrix asks for nothing"
        );
    }

    #[test]
    fn each_orientation_moves_the_corners_as_named() {
        // 3 wide, 2 high: a b c / d e f.
        let coded = vec![vec![1, 2, 3], vec![4, 5, 6]];
        let cases = [
            (Orientation::Upright, vec![vec![1, 2, 3], vec![4, 5, 6]]),
            (
                Orientation::Rotate90,
                vec![vec![4, 1], vec![5, 2], vec![6, 3]],
            ),
            (Orientation::Rotate180, vec![vec![6, 5, 4], vec![3, 2, 1]]),
            (
                Orientation::Rotate270,
                vec![vec![3, 6], vec![2, 5], vec![1, 4]],
            ),
            (
                Orientation::FlipHorizontal,
                vec![vec![3, 2, 1], vec![6, 5, 4]],
            ),
            (
                Orientation::FlipVertical,
                vec![vec![4, 5, 6], vec![1, 2, 3]],
            ),
            (
                Orientation::Transpose,
                vec![vec![1, 4], vec![2, 5], vec![3, 6]],
            ),
            (
                Orientation::Transverse,
                vec![vec![6, 3], vec![5, 2], vec![4, 1]],
            ),
        ];
        for (o, want) in cases {
            assert_eq!(shown(o, &coded), want, "{o}");
        }
    }

    proptest! {
        /// Every orientation is a permutation of the pixels, and the quarter turns compose as turns do.
        #[test]
        fn orientations_permute_pixels_and_turns_compose(w in 1usize..9, h in 1usize..9) {
            let coded: Vec<Vec<u32>> = (0..h).map(|y| (0..w).map(|x| (y * w + x) as u32).collect()).collect();
            for o in Orientation::ALL {
                let mut seen: Vec<u32> = shown(o, &coded).into_iter().flatten().collect();
                seen.sort_unstable();
                prop_assert_eq!(seen, (0..(w * h) as u32).collect::<Vec<_>>());
                prop_assert_eq!(o.code() & 4 != 0, o.swaps_sides());
            }
            let twice = shown(Orientation::Rotate90, &shown(Orientation::Rotate90, &coded));
            prop_assert_eq!(&twice, &shown(Orientation::Rotate180, &coded));
            let back = shown(Orientation::Rotate270, &shown(Orientation::Rotate90, &coded));
            prop_assert_eq!(&back, &coded);
            let mirrored = shown(Orientation::Transpose, &shown(Orientation::Transpose, &coded));
            prop_assert_eq!(&mirrored, &coded);
        }
    }
}
