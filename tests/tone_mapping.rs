//! HDR to SDR (issue 62): `Transforms::tonemap` against the `ffmpeg` reference chain
//! `zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=OP,zscale=t=bt709:m=bt709:r=tv` (then
//! `-pix_fmt rgb24`), for every curve, PQ (its peak read from the frames' HDR10 metadata) and HLG, the curves'
//! options too. The stated tolerance: PSNR >= 45 dB per frame (measured: 50.7-59.3 dB; both sides round to 8 bits
//! and interpolate chroma a little differently). Frames that are not HDR pass unchanged; crops are the same
//! pixels of the whole tone-mapped frame; uint16 and floats carry the same picture.

mod common;

use std::path::Path;

use common::{ffmpeg_stdout, fixture, psnr, skip_without_ffmpeg};
use framefeed::{Config, Crop, CropPosition, DType, Encoded, ToneMap, Transforms, VideoInput};

/// Every real frame of `path` under `transforms`, in order.
fn frames(path: &Path, transforms: Transforms) -> Vec<Vec<u8>> {
    let input = VideoInput::new(Config::new(2, 2).transforms(transforms)).unwrap();
    input.feed(Encoded::file(path).unwrap()).unwrap();
    input.close();
    input
        .iter()
        .flat_map(|b| {
            let b = b.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            b.sequences()
                .into_iter()
                .flat_map(|s| s.frames().map(|f| f.data().to_vec()).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The reference chain's rgb24 frames, with the `tonemap` filter's options `op` (`hable`, `hable:peak=5`...).
fn chain(path: &Path, op: &str) -> Vec<u8> {
    let vf = format!(
        "zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap={op},zscale=t=bt709:m=bt709:r=tv"
    );
    ffmpeg_stdout(
        path,
        &["-vf", &vf, "-pix_fmt", "rgb24", "-f", "rawvideo", "-"],
    )
}

fn tonemap(spec: &str) -> Transforms {
    Transforms::new().tonemap(spec.parse::<ToneMap>().unwrap())
}

#[test]
fn every_curve_matches_the_zscale_tonemap_chain() {
    if skip_without_ffmpeg("the tone mapping conformance test") {
        return;
    }
    for name in ["tonemap_pq_hevc10.mp4", "tonemap_hlg_hevc10.mp4"] {
        let path = fixture(name);
        for spec in [
            "hable",
            "mobius",
            "reinhard",
            "clip",
            "hable:peak=5:desat=0",
            "mobius:param=0.5",
            "reinhard:param=0.3:desat=1",
            "clip:param=2",
        ] {
            let ours = frames(&path, tonemap(spec));
            let theirs = chain(&path, spec);
            let len = ours[0].len();
            assert_eq!(theirs.len(), ours.len() * len, "{name} {spec}: frames");
            for (i, frame) in ours.iter().enumerate() {
                let db = psnr(frame, &theirs[i * len..(i + 1) * len]);
                assert!(db >= 45.0, "{name} {spec}, frame {i}: {db:.1} dB");
            }
        }
    }
}

#[test]
fn the_peak_is_read_from_the_frames_hdr10_metadata() {
    // The PQ fixture says 4000 cd/m² (MaxCLL): the chain's peak is 40. Told 10 instead, the curve differs.
    if skip_without_ffmpeg("the tone mapping peak test") {
        return;
    }
    let path = fixture("tonemap_pq_hevc10.mp4");
    let theirs = chain(&path, "hable");
    let read = frames(&path, tonemap("hable"));
    let told = frames(&path, tonemap("hable:peak=40"));
    let wrong = frames(&path, tonemap("hable:peak=10"));
    assert_eq!(read, told, "the frames' peak is 40");
    let len = read[0].len();
    let db = psnr(&wrong[0], &theirs[..len]);
    assert!(
        db < 40.0,
        "a peak of 10 should not match the chain's 40: {db:.1} dB"
    );
}

#[test]
fn sdr_frames_pass_unchanged_and_crops_and_types_carry_the_same_picture() {
    let sdr = fixture("h264.mp4");
    assert_eq!(
        frames(&sdr, tonemap("hable")),
        frames(&sdr, Transforms::new())
    );
    let path = fixture("tonemap_pq_hevc10.mp4");
    let whole = frames(&path, tonemap("hable"));
    let fw = 256usize;
    for ((w, h), (px, py)) in [
        ((50usize, 31usize), (0.3, 0.8)),
        ((1, 1), (0.0, 0.0)),
        ((1, 1), (1.0, 1.0)),
        ((3, 2), (0.51, 0.49)),
        ((255, 143), (1.0, 0.0)),
    ] {
        let crop = Crop::new(w as u32, h as u32).position(CropPosition::Fixed { x: px, y: py });
        let input =
            VideoInput::new(Config::new(4, 1).transforms(tonemap("hable").crop(crop))).unwrap();
        input.feed(Encoded::file(&path).unwrap()).unwrap();
        input.close();
        for batch in input.iter() {
            for seq in batch.unwrap().sequences() {
                let win = seq.crop_window().unwrap();
                for f in seq.frames() {
                    let full = &whole[f.index() as usize];
                    let want: Vec<u8> = (win.y as usize..win.y as usize + h)
                        .flat_map(|y| full[(y * fw + win.x as usize) * 3..][..w * 3].to_vec())
                        .collect();
                    let at = (win.x, win.y, w, h);
                    assert!(
                        f.data() == want.as_slice(),
                        "frame {}: crop {at:?} differs",
                        f.index()
                    );
                }
            }
        }
    }
    // uint16: the same picture, 8 more bits; float32_unit: the 16-bit levels / 65535.
    let sixteen = frames(&path, tonemap("hable").dtype(DType::U16));
    let unit = frames(&path, tonemap("hable").dtype(DType::F32Unit));
    for ((eight, wide), floats) in whole.iter().zip(&sixteen).zip(&unit) {
        for (i, (b8, b16)) in eight.iter().zip(wide.chunks_exact(2)).enumerate() {
            let v = u16::from_le_bytes([b16[0], b16[1]]);
            assert_eq!(
                ((u32::from(v) * 255 + 32767) / 65535) as u8,
                *b8,
                "element {i}"
            );
            let f = f32::from_le_bytes(floats[i * 4..i * 4 + 4].try_into().unwrap());
            assert_eq!(f, f32::from(v) / 65535.0);
        }
    }
}

#[test]
fn bad_tonemap_settings_name_the_allowed_values() {
    for (spec, says) in [
        ("filmic", "allowed: 'hable', 'mobius', 'reinhard', 'clip'"),
        ("hable:peak=0", "tonemap peak is 0; allowed: 0.01 to 100"),
        ("hable:desat=-1", "tonemap desat is -1; allowed: 0 to 100"),
        ("hable:param=1", "allowed: none (hable takes no param)"),
        ("mobius:param=1.5", "allowed: above 0 and below 1"),
        ("clip:gain=2", "allowed keys: peak, desat, param"),
        ("clip:param", "is not KEY=VALUE"),
        ("clip:param=x", "tonemap param is 'x'; allowed: a number"),
    ] {
        let err = spec.parse::<ToneMap>().unwrap_err();
        assert!(err.contains(says), "{spec}: {err}");
    }
}
