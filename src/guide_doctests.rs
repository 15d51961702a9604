//! The README's and the guide's Rust code blocks, compiled and run as doctests (`cargo test --doc`): each page
//! is the documentation of an item here, built only by rustdoc's test run. A block that needs a network peer or
//! a camera is `rust,no_run` (compiled, not run). The Python blocks are run by `python/tests/test_guide.py`.
#![cfg(doctest)]

/// The README.
#[doc = include_str!("../README.md")]
pub struct Readme;

/// `docs/guide/audio.md`.
#[doc = include_str!("../docs/guide/audio.md")]
pub struct Audio;

/// `docs/guide/batching.md`.
#[doc = include_str!("../docs/guide/batching.md")]
pub struct Batching;

/// `docs/guide/cameras-mux.md`.
#[doc = include_str!("../docs/guide/cameras-mux.md")]
pub struct CamerasMux;

/// `docs/guide/cli.md`.
#[doc = include_str!("../docs/guide/cli.md")]
pub struct Cli;

/// `docs/guide/colour.md`.
#[doc = include_str!("../docs/guide/colour.md")]
pub struct Colour;

/// `docs/guide/damaged-videos.md`.
#[doc = include_str!("../docs/guide/damaged-videos.md")]
pub struct DamagedVideos;

/// `docs/guide/deployment.md`.
#[doc = include_str!("../docs/guide/deployment.md")]
pub struct Deployment;

/// `docs/guide/errors.md`.
#[doc = include_str!("../docs/guide/errors.md")]
pub struct Errors;

/// `docs/guide/feeding-and-polling.md`.
#[doc = include_str!("../docs/guide/feeding-and-polling.md")]
pub struct FeedingAndPolling;

/// `docs/guide/gpu.md`.
#[doc = include_str!("../docs/guide/gpu.md")]
pub struct Gpu;

/// `docs/guide/install.md`.
#[doc = include_str!("../docs/guide/install.md")]
pub struct Install;

/// `docs/guide/limits-and-memory.md`.
#[doc = include_str!("../docs/guide/limits-and-memory.md")]
pub struct LimitsAndMemory;

/// `docs/guide/live-input.md`.
#[doc = include_str!("../docs/guide/live-input.md")]
pub struct LiveInput;

/// `docs/guide/migrating-from-dali.md`.
#[doc = include_str!("../docs/guide/migrating-from-dali.md")]
pub struct MigratingFromDali;

/// `docs/guide/migrating-from-decord.md`.
#[doc = include_str!("../docs/guide/migrating-from-decord.md")]
pub struct MigratingFromDecord;

/// `docs/guide/migrating-from-torchcodec.md`.
#[doc = include_str!("../docs/guide/migrating-from-torchcodec.md")]
pub struct MigratingFromTorchcodec;

/// `docs/guide/performance.md`.
#[doc = include_str!("../docs/guide/performance.md")]
pub struct Performance;

/// `docs/guide/pytorch.md`.
#[doc = include_str!("../docs/guide/pytorch.md")]
pub struct Pytorch;

/// `docs/guide/random-access.md`.
#[doc = include_str!("../docs/guide/random-access.md")]
pub struct RandomAccess;

/// `docs/guide/ray.md`.
#[doc = include_str!("../docs/guide/ray.md")]
pub struct Ray;

/// `docs/guide/remote-videos.md`.
#[doc = include_str!("../docs/guide/remote-videos.md")]
pub struct RemoteVideos;

/// `docs/guide/sampling.md`.
#[doc = include_str!("../docs/guide/sampling.md")]
pub struct Sampling;

/// `docs/guide/service.md`.
#[doc = include_str!("../docs/guide/service.md")]
pub struct Service;

/// `docs/guide/transforms.md`.
#[doc = include_str!("../docs/guide/transforms.md")]
pub struct Transforms;

/// `docs/guide/troubleshooting.md`.
#[doc = include_str!("../docs/guide/troubleshooting.md")]
pub struct Troubleshooting;
