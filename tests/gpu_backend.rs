//! The CUDA backend (`--features cuda`): device selection without a GPU (error values, never panics), and the
//! same decoding checks run over every backend present — CPU always, NVDEC when a usable GPU is there. GPU
//! checks print why they skip on machines without one; with `REQUIRE_GPU=1` they fail instead.
mod common;

use common::{corpus, fixture, missing, read_fixture, Need, TURNED};
use framefeed::{
    Batch, Config, Crop, CropPosition, DType, DecodedOn, Device, Error, LastSequencePolicy, Layout,
    NvdecDriver, Resize, Transforms, VideoError, VideoInput,
};

/// Whether a usable GPU is present; otherwise prints why the test skips (or fails where `FRAMEFEED_REQUIRE`
/// names `gpu`, or `REQUIRE_GPU=1`).
fn gpu_or_skip(test: &str) -> bool {
    let usable = VideoInput::new(Config::new(1, 1).device(Device::Cuda(0)));
    match usable {
        Ok(_) => true,
        Err(e) => !missing(Need::Gpu, test, &format!("no usable GPU ({e})")),
    }
}

fn decode(config: Config, videos: &[Vec<u8>]) -> Vec<Result<Batch, Error>> {
    let input = VideoInput::new(config).expect("valid config");
    for v in videos {
        input.feed(v.clone()).expect("feed");
    }
    input.close();
    input.iter().collect()
}

#[test]
fn cuda_that_cannot_be_used_is_an_error_value_and_auto_falls_back_to_the_cpu() {
    let status = framefeed::cuda_status();
    let cuda = VideoInput::new(Config::new(4, 2).device(Device::Cuda(0)));
    let auto = VideoInput::new(Config::new(4, 2).device(Device::Auto)).expect("auto always works");
    match cuda {
        Ok(input) => {
            assert_eq!(input.device(), Device::Cuda(0));
            assert_eq!(auto.device(), Device::Cuda(0), "auto picks a usable GPU");
        }
        Err(Error::CudaUnavailable { device, reason }) => {
            assert_eq!(device, Device::Cuda(0));
            assert!(!reason.is_empty());
            if cfg!(not(feature = "cuda")) {
                assert!(reason.contains("`cuda` feature"), "{reason}");
            }
            assert!(
                status.is_err() || reason.contains("device") || reason.contains("NVDEC"),
                "{reason}"
            );
            let message = Error::CudaUnavailable { device, reason }.to_string();
            assert!(message.starts_with("cannot use cuda:0: "), "{message}");
            assert_eq!(auto.device(), Device::Cpu);
            auto.feed(framefeed::SAMPLE_MP4).unwrap();
            auto.close();
            let batches: Vec<Batch> = auto.iter().map(Result::unwrap).collect();
            assert_eq!(batches.iter().map(Batch::valid_frames).sum::<usize>(), 60);
            assert!(batches
                .iter()
                .all(|b| !b.is_on_gpu() && b.decoded_on() == DecodedOn::Cpu));
        }
        Err(other) => panic!("unexpected error: {other}"),
    }
    // A device that cannot exist is always an error, also with a GPU.
    match VideoInput::new(Config::new(4, 2).device(Device::Cuda(4096))) {
        Err(Error::CudaUnavailable { .. }) => {}
        Err(other) => panic!("unexpected error: {other}"),
        Ok(_) => panic!("CUDA device 4096 does not exist"),
    }
}

#[test]
fn host_batches_copy_to_host_unchanged() {
    let batches = decode(Config::new(8, 2), &[framefeed::SAMPLE_MP4.to_vec()]);
    for b in batches.iter().map(|b| b.as_ref().unwrap()) {
        let copy = b.to_host().unwrap();
        assert_eq!(copy.data(), b.data());
        assert_eq!(copy.len(), b.len());
        assert_eq!(copy.is_last(), b.is_last());
        assert_eq!(copy.decoded_on(), DecodedOn::Cpu);
    }
}

/// A batch's index, last flag, and per sequence (frames, valid frames, first frame).
type BatchShape = (u64, bool, Vec<(usize, usize, u64)>);

/// What a decode is asked for: the transforms, and what the test needs to read their output back as 8-bit
/// levels (the element type, the layout, and the per-channel standard deviation of a normalization).
#[derive(Clone)]
struct Output {
    transforms: Transforms,
    dtype: DType,
    layout: Layout,
    std: [f32; 3],
}

impl Output {
    fn rgb() -> Self {
        Self::new(Transforms::default(), DType::U8, Layout::Fhwc, [1.0; 3])
    }

    fn new(transforms: Transforms, dtype: DType, layout: Layout, std: [f32; 3]) -> Self {
        Self {
            transforms: transforms.dtype(dtype).layout(layout),
            dtype,
            layout,
            std,
        }
    }
}

/// The batch structure, timestamps and (host copies of the) frames of a decode, as 8-bit levels.
struct Decoded {
    structure: Vec<BatchShape>,
    pts: Vec<f64>,
    levels: Vec<f32>,
    decoded_on: Vec<DecodedOn>,
    /// Each valid frame's display index and levels, in order.
    frames: Vec<(u64, Vec<f32>)>,
}

/// Both ways of driving NVDEC: every GPU check runs over each.
const DRIVERS: [NvdecDriver; 2] = [NvdecDriver::Direct, NvdecDriver::Hwaccel];

fn run(device: Device, output: &Output, video: &[u8]) -> Result<Decoded, Error> {
    run_with(device, NvdecDriver::Direct, output, video)
}

fn run_with(
    device: Device,
    driver: NvdecDriver,
    output: &Output,
    video: &[u8],
) -> Result<Decoded, Error> {
    let config = Config::new(5, 2)
        .last_sequence_policy(LastSequencePolicy::Pad)
        .device(device)
        .nvdec_driver(driver)
        .transforms(output.transforms.clone());
    collect(config, matches!(device, Device::Cuda(_)), output, video)
}

/// Decodes `video` with `config` (on the GPU: `on_gpu`), whose transforms are `output`'s.
fn collect(config: Config, on_gpu: bool, output: &Output, video: &[u8]) -> Result<Decoded, Error> {
    let mut d = Decoded {
        structure: Vec::new(),
        pts: Vec::new(),
        levels: Vec::new(),
        decoded_on: Vec::new(),
        frames: Vec::new(),
    };
    for batch in decode(config, &[video.to_vec()]) {
        let batch = batch?;
        assert_eq!(batch.is_on_gpu(), on_gpu);
        d.decoded_on.push(batch.decoded_on());
        let host = batch.to_host()?;
        d.structure.push((
            host.index(),
            host.is_last(),
            host.sequences()
                .iter()
                .map(|s| (frames(s), s.valid_frames(), s.first_frame()))
                .collect(),
        ));
        let [h, w, _] = host.frame_shape();
        for s in host.sequences() {
            d.pts.extend_from_slice(s.pts());
            let levels = levels(output, &s, [frames(&s), h, w]);
            let per_frame = levels.len() / frames(&s).max(1);
            for (&index, frame) in s.indices().iter().zip(levels.chunks(per_frame)) {
                d.frames.push((index, frame.to_vec()));
            }
            d.levels.extend(levels);
        }
    }
    Ok(d)
}

/// Frames in a sequence, padding included (its shape's F, wherever the layout puts it).
fn frames(s: &framefeed::Sequence<'_>) -> usize {
    s.valid_frames() + s.padded_frames()
}

/// A sequence's values in 8-bit level units: u8 as they are; floats scaled back by 255 (unit types) and the
/// normalization's standard deviation, so that a difference of one level counts 1 whatever the output type.
fn levels(output: &Output, s: &framefeed::Sequence<'_>, [f, h, w]: [usize; 3]) -> Vec<f32> {
    let channel = |i: usize| -> usize {
        match output.layout {
            Layout::Fhwc => i % 3,
            Layout::Fchw => i / (h * w) % 3,
            Layout::Cfhw => i / (f * h * w),
        }
    };
    let unit = if matches!(output.dtype, DType::F32Unit) {
        255.0
    } else {
        1.0
    };
    match output.dtype {
        DType::U8 => s.data().iter().map(|&v| f32::from(v)).collect(),
        DType::U16 => s
            .data_u16()
            .expect("u16 output")
            .iter()
            .map(|&v| f32::from(v) / 257.0)
            .collect(),
        _ => s
            .data_f32()
            .expect("the tests' float outputs are f32")
            .iter()
            .enumerate()
            .map(|(i, &v)| v * unit * output.std[channel(i)])
            .collect(),
    }
}

/// Mean absolute difference in 8-bit levels.
fn mean_abs_diff(a: &Decoded, b: &Decoded) -> f64 {
    levels_diff(&a.levels, &b.levels)
}

/// A GPU decode against the CPU's: identical batch structure and timestamps, frames within 1.5 levels on
/// average.
fn assert_matches_cpu(what: &str, gpu: &Decoded, cpu: &Decoded) {
    assert_eq!(gpu.structure, cpu.structure, "{what}: batch structure");
    assert_eq!(gpu.pts, cpu.pts, "{what}: timestamps");
    let diff = mean_abs_diff(gpu, cpu);
    eprintln!("{what}: GPU vs CPU mean absolute difference {diff:.3} levels");
    assert!(diff <= 1.5, "{what}: mean absolute difference {diff}");
}

/// The same decode on every backend present: identical batch structure and timestamps, frames within 1.5
/// levels on average.
fn check_backends_agree(name: &str, video: &[u8], output: &Output) {
    let cpu = run(Device::Cpu, output, video).expect("CPU decode");
    assert!(
        !cpu.structure.is_empty() && !cpu.frames.is_empty(),
        "{name}: the CPU decode gave no frame"
    );
    if !gpu_or_skip(name) {
        return;
    }
    for driver in DRIVERS {
        let gpu = run_with(Device::Cuda(0), driver, output, video).expect("GPU decode");
        assert!(
            gpu.decoded_on.iter().all(|d| *d == DecodedOn::Cuda),
            "{name} ({driver}): decoded on NVDEC, not by the CPU fallback"
        );
        assert_matches_cpu(&format!("{name} ({driver})"), &gpu, &cpu);
    }
}

#[test]
fn backends_agree_on_plain_frames() {
    // Sizes NVDEC takes for each codec (HEVC from 144x144, VP9 from 128x128), odd ones included.
    for name in [
        "h264.mp4",
        "h264_bt709.mp4",
        "h264.ts",
        "h264_100x60.mp4",
        "hevc_10bit_146x144.mp4",
        "vp9_odd_129x129.webm",
        "vp8.webm",
        "mpeg4.avi",
        // An edit list starting mid-GOP: the pictures before it are decoded as references, never shown.
        "sampling_edit_list.mp4",
    ] {
        check_backends_agree(name, &read_fixture(name), &Output::rgb());
    }
}

#[test]
fn backends_agree_on_crop_normalize_and_layout() {
    let std = [0.229, 0.224, 0.225];
    let crop = Transforms::default()
        .crop(Crop::new(48, 32).position(CropPosition::Random))
        .normalize([0.485, 0.456, 0.406], std)
        .seed(3);
    for (dtype, layout, std) in [
        (DType::F32Unit, Layout::Cfhw, std),
        (DType::F32, Layout::Fchw, std),
        (DType::U8, Layout::Fhwc, [1.0; 3]),
    ] {
        let t = if dtype == DType::U8 {
            Transforms::default()
                .crop(Crop::new(48, 32).position(CropPosition::Random))
                .seed(3)
        } else {
            crop.clone()
        };
        check_backends_agree(
            &format!("h264.mp4 crop {dtype:?} {layout:?}"),
            &read_fixture("h264.mp4"),
            &Output::new(t, dtype, layout, std),
        );
    }
}

#[test]
fn backends_agree_on_sixteen_bit_output_and_tone_mapping() {
    // Issue 62: P016 surfaces through the kernel at 16-bit levels, and HDR to SDR, against the CPU's RGB48 and
    // tone mapper (both drivers: the direct one reads the peak from the container's HDR10 boxes, the hwaccel
    // one from the frames).
    for (dtype, layout) in [(DType::U16, Layout::Fhwc), (DType::F32Unit, Layout::Cfhw)] {
        check_backends_agree(
            &format!("hevc_10bit_146x144.mp4 {dtype:?}"),
            &read_fixture("hevc_10bit_146x144.mp4"),
            &Output::new(Transforms::default(), dtype, layout, [1.0; 3]),
        );
    }
    for name in ["tonemap_pq_hevc10.mp4", "tonemap_hlg_hevc10.mp4"] {
        for spec in ["hable", "mobius", "reinhard", "clip"] {
            let t = Transforms::default().tonemap(spec.parse().unwrap());
            check_backends_agree(
                &format!("{name} tonemap {spec}"),
                &read_fixture(name),
                &Output::new(t, DType::U8, Layout::Fhwc, [1.0; 3]),
            );
        }
    }
}

#[test]
fn backends_agree_on_resize_and_crop() {
    for (name, resize) in [
        ("h264.mp4", Resize::Shorter(40)),
        (
            "hevc_10bit_146x144.mp4",
            Resize::Exact {
                width: 96,
                height: 80,
            },
        ),
        ("vp9_odd_129x129.webm", Resize::Shorter(100)),
    ] {
        let t = Transforms::default()
            .resize(resize)
            .crop(Crop::new(32, 32).position(CropPosition::Random))
            .seed(5);
        check_backends_agree(
            &format!("{name} {resize:?} + crop"),
            &read_fixture(name),
            &Output::new(t, DType::U8, Layout::Fhwc, [1.0; 3]),
        );
    }
}

#[test]
fn videos_nvdec_cannot_decode_fall_back_to_the_cpu_or_fail_clearly() {
    if !gpu_or_skip("fallback") {
        return;
    }
    // 35x19 is below NVDEC's smallest size: decoded on the CPU, uploaded, and said so.
    let odd = read_fixture("vp9_odd_35x19.webm");
    let batches = decode(
        Config::new(4, 2).device(Device::Cuda(0)),
        std::slice::from_ref(&odd),
    );
    let batches: Vec<Batch> = batches.into_iter().map(Result::unwrap).collect();
    assert!(!batches.is_empty());
    assert!(batches
        .iter()
        .all(|b| b.is_on_gpu() && b.decoded_on() == DecodedOn::Cpu));
    let cpu = decode(Config::new(4, 2), std::slice::from_ref(&odd));
    for (g, c) in batches.iter().zip(&cpu) {
        assert_eq!(
            g.to_host().unwrap().data(),
            c.as_ref().unwrap().data(),
            "uploaded as decoded"
        );
    }
    // Without fallback: that video fails with the reason, the next one decodes on NVDEC.
    let results = decode(
        Config::new(4, 2)
            .device(Device::Cuda(0))
            .cpu_fallback(false),
        &[odd, read_fixture("h264.mp4")],
    );
    match &results[0] {
        Err(Error::Video {
            error: VideoError::NvdecUnsupported { reason },
            ..
        }) => assert!(reason.contains("35x19"), "{reason}"),
        other => panic!("expected NvdecUnsupported, got {other:?}"),
    }
    let rest: Vec<&Batch> = results[1..].iter().map(|r| r.as_ref().unwrap()).collect();
    assert_eq!(rest.iter().map(|b| b.valid_frames()).sum::<usize>(), 23);
    assert!(rest.iter().all(|b| b.decoded_on() == DecodedOn::Cuda));
    // AV1: Hopper's NVDEC has none; libavcodec then offers software formats only, and the video moves to the
    // CPU (or, on a GPU with AV1 decoding, stays on NVDEC). Either way every frame arrives.
    let av1 = decode(
        Config::new(4, 2).device(Device::Cuda(0)),
        &[read_fixture("av1.mkv")],
    );
    let frames: usize = av1.iter().map(|b| b.as_ref().unwrap().valid_frames()).sum();
    let cpu_frames: usize = decode(Config::new(4, 2), &[read_fixture("av1.mkv")])
        .iter()
        .map(|b| b.as_ref().unwrap().valid_frames())
        .sum();
    assert_eq!(frames, cpu_frames);
}

#[test]
fn dropping_a_gpu_operator_mid_video_returns() {
    if !gpu_or_skip("drop mid video") {
        return;
    }
    for _ in 0..3 {
        let input = VideoInput::new(Config::new(4, 1).device(Device::Cuda(0))).unwrap();
        input.feed(read_fixture("h264.mp4")).unwrap();
        let first = input.next_batch().unwrap().unwrap();
        assert!(first.is_on_gpu());
        drop(input);
        // The batch outlives its operator and still copies out.
        assert_eq!(first.to_host().unwrap().valid_frames(), 4);
    }
}

/// Every file of the shared corpus that NVDEC decodes: same structure and timestamps, frames within 1.5
/// levels of the CPU backend.
#[test]
fn shared_corpus_gpu_matches_cpu() {
    let Some(dir) = corpus("the shared corpus on NVDEC") else {
        return;
    };
    if !gpu_or_skip("shared corpus") {
        return;
    }
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("MANIFEST.json")).unwrap()).unwrap();
    for entry in manifest.as_array().unwrap() {
        let file = entry["file"].as_str().unwrap();
        if file.contains("corrupted") || file.contains("long_") {
            continue; // corrupt on purpose / 9000 frames: covered by the CPU conformance tests
        }
        let video = std::fs::read(dir.join(file)).unwrap();
        let cpu = run(Device::Cpu, &Output::rgb(), &video).unwrap();
        for driver in DRIVERS {
            match run_with(Device::Cuda(0), driver, &Output::rgb(), &video) {
                Ok(gpu) if gpu.decoded_on.iter().all(|d| *d == DecodedOn::Cuda) => {
                    assert_matches_cpu(&format!("{file} ({driver})"), &gpu, &cpu);
                }
                Ok(_) => eprintln!("{file} ({driver}): NVDEC does not decode it (CPU fallback)"),
                Err(e) => panic!("{file} ({driver}): {e}"),
            }
        }
    }
    let _ = fixture("h264.mp4");
}

/// A resolution change inside one H.264 stream: the direct decoder is made again for the new size, and both
/// drivers give the CPU's batches (the batches break where the size changes).
#[test]
fn resolution_change_inside_a_stream_matches_the_cpu() {
    if !gpu_or_skip("resolution change") {
        return;
    }
    let video = read_fixture("res_change.h264");
    let cpu = run(Device::Cpu, &Output::rgb(), &video).expect("CPU decode");
    for driver in DRIVERS {
        let gpu = run_with(Device::Cuda(0), driver, &Output::rgb(), &video).expect("GPU decode");
        assert!(
            gpu.decoded_on.iter().all(|d| *d == DecodedOn::Cuda),
            "{driver}"
        );
        assert_matches_cpu(&format!("res_change.h264 ({driver})"), &gpu, &cpu);
    }
}

/// Videos turned by their display matrix (issue 48; every angle and mirror, 8-bit 100x60 and 10-bit HEVC), on
/// NVDEC with both drivers: the CUDA kernel reads the surface turned, as the CPU turns the planes: the same
/// batches (the shown shapes), frames within the backends' levels, plain and resized and cropped after the turn;
/// sampled (clips, stride) too, sought in on NVDEC.
#[test]
fn turned_videos_on_nvdec_match_the_cpu() {
    if !gpu_or_skip("turned videos") {
        return;
    }
    let resized = Transforms::default()
        .resize(Resize::Shorter(48))
        .crop(Crop::new(40, 32).position(CropPosition::Random))
        .seed(3);
    for name in TURNED {
        let video = read_fixture(name);
        for output in [
            Output::rgb(),
            Output::new(resized.clone(), DType::U8, Layout::Fhwc, [1.0; 3]),
        ] {
            check_backends_agree(name, &video, &output);
        }
        for sampling in [
            framefeed::Sampling::new()
                .clips(3, framefeed::ClipSampler::Random)
                .seed(1),
            framefeed::Sampling::new().stride(2),
        ] {
            let config = |device: Device, driver: NvdecDriver| {
                Config::new(4, 2)
                    .device(device)
                    .nvdec_driver(driver)
                    .sampling(sampling.clone())
            };
            let cpu = collect(
                config(Device::Cpu, NvdecDriver::Direct),
                false,
                &Output::rgb(),
                &video,
            )
            .expect("CPU decode");
            for driver in DRIVERS {
                let gpu = collect(
                    config(Device::Cuda(0), driver),
                    true,
                    &Output::rgb(),
                    &video,
                )
                .expect("GPU decode");
                assert_matches_cpu(&format!("{name} sampled ({driver})"), &gpu, &cpu);
            }
        }
    }
}

/// A sampled video's files: the fixtures' open GOPs (H.264 with a B-pyramid; 10-bit HEVC with CRA keyframes
/// and leading pictures), an edit list starting mid-GOP, odd-sized VP9, and where present the shared corpus's
/// H.264, HEVC, VP9 and AV1 clips.
fn sampled_videos() -> Vec<(String, Vec<u8>)> {
    let mut videos: Vec<(String, Vec<u8>)> = [
        "sampling_h264_open_gop.mp4",
        "sampling_hevc10_open_gop_192x144.mp4",
        "sampling_edit_list.mp4",
        "vp9_odd_129x129.webm",
    ]
    .iter()
    .map(|name| (name.to_string(), read_fixture(name)))
    .collect();
    if let Some(dir) = corpus("the corpus clips sampled on NVDEC") {
        for name in [
            "cfr_720p60.mov",
            "dog_848x464_h264_aac.mp4",
            "testsrc2_h265.mp4",
            "testsrc2_vp9.webm",
            "av1_video.mkv",
        ] {
            if let Ok(video) = std::fs::read(dir.join(name)) {
                videos.push((name.to_owned(), video));
            }
        }
    }
    videos
}

/// Sampled videos seek and decode only the GOPs they need on NVDEC (each needed picture copied out of its
/// surface once, converted into every slot that takes it): the same sequences as the CPU's sampled decode
/// (structure, indices, timestamps, frames within 1.5 levels on average and 3 for any frame), and every frame
/// the same bytes as the same driver's decode of the whole video at its index. Clips that overlap, stride and
/// step that skip GOPs, a list of indices with one repeated, a frame rate above the video's (each picture in two
/// slots), a segment, and a random crop per sequence.
#[test]
fn sampled_videos_seek_and_decode_on_nvdec_like_the_cpu() {
    use framefeed::{ClipSampler, Sampling};
    if !gpu_or_skip("sampled videos on NVDEC") {
        return;
    }
    let cropped = Output::new(
        Transforms::default().crop(Crop::new(48, 40).position(CropPosition::Random)),
        DType::U8,
        Layout::Fhwc,
        [1.0; 3],
    );
    let mut failures = Vec::new();
    for (name, video) in sampled_videos() {
        let whole_cpu = collect(Config::new(1, 64), false, &Output::rgb(), &video).expect(&name);
        let count = whole_cpu.frames.len() as u64;
        let samplings = [
            (
                "clips",
                Sampling::new().clips(4, ClipSampler::Random).seed(7),
                8,
            ),
            ("stride 2, step 40", Sampling::new().stride(2).step(40), 4),
            (
                "indices",
                Sampling::new().indices(vec![0, 1, count / 3, count / 2 + 1, count - 1, count - 1]),
                2,
            ),
            (
                "twice the frame rate",
                Sampling::new().fps(50.0).stride(3),
                4,
            ),
            (
                "a segment",
                Sampling::new().segment(count / 3, count / 3 + 9),
                4,
            ),
        ];
        let outputs = [(Output::rgb(), ""), (cropped.clone(), ", random crop")];
        let config = |sampling: &Sampling, length: usize, output: &Output, device, driver| {
            Config::new(length, 3)
                .sampling(sampling.clone())
                .device(device)
                .nvdec_driver(driver)
                .transforms(output.transforms.clone())
        };
        // The CPU's sampled decodes, once for both drivers.
        let mut cpu = Vec::new();
        for (what, sampling, length) in &samplings {
            for (output, _) in &outputs {
                let c = config(sampling, *length, output, Device::Cpu, NvdecDriver::Direct);
                let decoded = collect(c, false, output, &video).expect(what);
                assert!(
                    !decoded.frames.is_empty(),
                    "{name}, {what}: some frames sampled"
                );
                cpu.push(decoded);
            }
        }
        for driver in DRIVERS {
            let whole_gpu = collect(
                Config::new(1, 64)
                    .device(Device::Cuda(0))
                    .nvdec_driver(driver),
                true,
                &Output::rgb(),
                &video,
            )
            .expect(&name);
            if whole_gpu.decoded_on.iter().any(|d| *d != DecodedOn::Cuda) {
                eprintln!("{name} ({driver}): NVDEC does not decode it (CPU fallback)");
                continue;
            }
            let mut cpu = cpu.iter();
            for (what, sampling, length) in &samplings {
                for (output, crop) in &outputs {
                    let cpu = cpu.next().expect("one CPU decode each");
                    let label = format!("{name} ({driver}), {what}{crop}");
                    let c = config(sampling, *length, output, Device::Cuda(0), driver);
                    let gpu = collect(c, true, output, &video).expect(&label);
                    if gpu.decoded_on.iter().any(|d| *d != DecodedOn::Cuda) {
                        failures.push(format!("{label}: decoded by the CPU, not NVDEC"));
                        continue;
                    }
                    if (&gpu.structure, &gpu.pts) != (&cpu.structure, &cpu.pts) {
                        failures.push(format!("{label}: batch structure or timestamps differ"));
                        continue;
                    }
                    let indices = |d: &Decoded| d.frames.iter().map(|f| f.0).collect::<Vec<_>>();
                    assert_eq!(indices(&gpu), indices(cpu), "{label}: indices");
                    let diff = mean_abs_diff(&gpu, cpu);
                    let worst = gpu
                        .frames
                        .iter()
                        .zip(&cpu.frames)
                        .map(|(g, c)| levels_diff(&g.1, &c.1))
                        .fold(0.0, f64::max);
                    eprintln!("{label}: GPU vs CPU {diff:.3} levels, worst frame {worst:.3}");
                    if diff > 1.5 || worst > 3.0 {
                        failures.push(format!("{label}: {diff:.3} levels, worst frame {worst:.3}"));
                    }
                    if crop.is_empty() {
                        for (index, frame) in &gpu.frames {
                            let whole = &whole_gpu.frames[*index as usize];
                            assert_eq!(whole.0, *index);
                            if frame != &whole.1 {
                                failures.push(format!(
                                    "{label}: frame {index} is not the whole decode's ({:.3} levels off)",
                                    levels_diff(frame, &whole.1)
                                ));
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Mean absolute difference of two runs of levels (whole decodes, or one frame each).
fn levels_diff(a: &[f32], b: &[f32]) -> f64 {
    assert_eq!(a.len(), b.len());
    let sum: f64 = a.iter().zip(b).map(|(x, y)| f64::from((x - y).abs())).sum();
    sum / a.len().max(1) as f64
}
