//! One read of a [`VideoReader`](super::VideoReader): the asked indices sorted and each decoded once (the
//! sampling stage's seeker, from where the decoder stands), every frame converted straight into each place the
//! read asks for it, into one buffer of the reader's output (host or GPU memory), then wrapped as a batch of
//! one sequence.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use super::frames::Frames;
use super::metadata::VideoMetadata;
use crate::assembly::assembler::seq_out;
use crate::assembly::batch::{Batch, BatchData, Hole, SequenceMeta};
use crate::assembly::pool::BufferPool;
use crate::decode::frame::FrameRef;
use crate::decode::{damage, Decoder, Stop};
use crate::demux::check_frame_size;
use crate::demux::open::Opened;
use crate::device::{DecodedOn, Device, GpuRuntime};
use crate::error::{Error, Result, VideoError};
use crate::ffi::frame::AvFrame;
use crate::orientation::Orientation;
use crate::sample::index::FrameIndex;
use crate::sample::seek::{decode_needed, Needed, Position};
use crate::settings::config::{batch_bytes, Config};
use crate::settings::transforms::CHANNELS;
use crate::transform::plan::{Geometry, Planner};
use crate::transform::{self, HostScratch, Orienter};
use crate::video::VideoRef;

/// What a read asks for: display indices in order (repeats allowed), each below the video's frame count.
pub(super) struct Read {
    indices: Vec<u64>,
}

impl Read {
    pub(super) fn indices(indices: &[u64]) -> Self {
        Self {
            indices: indices.to_vec(),
        }
    }
}

/// The most decoded pictures a reader keeps for its next read (a decoder's reordering depth is smaller).
const MAX_HELD: usize = 16;

/// A decoded picture kept for the next read, with its display index and turn.
pub(super) struct Held {
    display: u64,
    frame: AvFrame,
    orientation: Orientation,
    damaged: bool,
}

/// The reader's state between reads, behind its lock.
pub(super) struct Reading {
    pub(super) opened: Opened,
    pub(super) index: Arc<FrameIndex>,
    pub(super) decoder: Box<dyn Decoder>,
    /// The decoder is NVDEC's (its frames are in GPU memory).
    pub(super) nvdec: bool,
    /// Where the decoder stands.
    pub(super) position: Position,
    pub(super) host: HostScratch,
    pub(super) orienter: Orienter,
    pub(super) config: Config,
    pub(super) device: Device,
    pub(super) gpu: Option<Arc<GpuRuntime>>,
    pub(super) pool: BufferPool,
    pub(super) video: VideoRef,
    /// Packets sent to the decoder by the reads so far.
    pub(super) packets: u64,
    /// Pictures the decoder gave past the last read's frames, for the next read (host frames only).
    pub(super) held: Vec<Held>,
    /// The holes the reads met (display indices whose pictures do not decode), ascending.
    pub(super) holes: Vec<Hole>,
}

/// The read's output buffer, made when its first frame shows the output size.
struct Output {
    data: BatchData,
    /// Output frame `(w, h)`.
    size: (usize, usize),
    /// Bytes of one output frame.
    frame_bytes: usize,
    /// The geometry planned for each decoded size (one crop window for the read).
    geometries: BTreeMap<(usize, usize), Geometry>,
    orientation: Orientation,
}

impl Reading {
    pub(super) fn read(
        &mut self,
        read: Read,
        metadata: &VideoMetadata,
        stop: &AtomicBool,
    ) -> Result<Frames> {
        let video = self.video.clone();
        let failed = |error: VideoError| Error::Video {
            video: video.clone(),
            error,
        };
        let n = read.indices.len();
        // Each needed frame once, ascending, and the places it goes.
        let mut places: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
        for (place, &d) in read.indices.iter().enumerate() {
            places.entry(d).or_default().push(place);
        }
        let first = read.indices.first().copied().unwrap_or(0);
        let transforms = self.config.transforms.clone();
        let mut planner = Planner::new(&transforms, 0);
        let on_gpu = self.gpu.is_some() && self.nvdec;
        let mut output: Option<Output> = None;
        let Reading {
            opened,
            index,
            decoder,
            position,
            host,
            orienter,
            config,
            gpu,
            pool,
            held,
            ..
        } = self;
        // Whether each frame of the read is damaged, by place.
        let mut damaged = vec![false; n];
        // Converts frame `d`, shown per `turn`, into every place the read asks for it.
        let mut put = |d: u64,
                       frame: FrameRef<'_>,
                       turn: Orientation,
                       is_damaged: bool|
         -> std::result::Result<(), Stop> {
            if is_damaged && config.strict {
                return Err(Stop::Video(damage::damaged_frame(
                    0,
                    d,
                    index.seconds_of(d),
                )));
            }
            let (w, h) = frame.size();
            check_frame_size(w as u32, h as u32, config)?;
            let shown = turn.displayed_size(w, h);
            if output.is_none() {
                let geometry = planner.plan(shown.0, shown.1, first)?;
                let size = geometry.out();
                let frame_bytes = size.0 * size.1 * CHANNELS * transforms.dtype.size();
                let len = batch_bytes(1, n, size, CHANNELS * transforms.dtype.size())
                    .and_then(|b| usize::try_from(b).ok())
                    .filter(|&b| b as u64 <= config.max_batch_bytes)
                    .ok_or(VideoError::BatchTooLarge {
                        max_batch_size: 1,
                        sequence_length: n,
                        frame: size,
                        bytes_per_pixel: CHANNELS * transforms.dtype.size(),
                        bytes: batch_bytes(1, n, size, CHANNELS * transforms.dtype.size()),
                        limit: config.max_batch_bytes,
                    })?;
                let data = match gpu.as_ref().filter(|_| on_gpu) {
                    Some(gpu) => BatchData::Device(gpu.acquire(len)?),
                    None => BatchData::Host(pool.acquire(len)?),
                };
                output = Some(Output {
                    data,
                    size,
                    frame_bytes,
                    geometries: BTreeMap::from([(shown, geometry)]),
                    orientation: turn,
                });
            }
            let out = output.as_mut().expect("made above");
            let geometry = match out.geometries.get(&shown) {
                Some(g) => *g,
                None => {
                    let g = planner.plan(shown.0, shown.1, first)?;
                    if g.out() != out.size {
                        return Err(Stop::Video(VideoError::Sampling {
                            reason: format!(
                                "the frames asked for are of two sizes ({}x{} and {}x{}: the video changes \
                                 size at frame {d} or before): read them apart, or resize them to one size",
                                out.size.0,
                                out.size.1,
                                g.out().0,
                                g.out().1
                            ),
                        }));
                    }
                    out.geometries.insert(shown, g);
                    g
                }
            };
            let region = n * out.frame_bytes;
            let mut slot = seq_out(&mut out.data, transforms.dtype, 0, region);
            for &place in &places[&d] {
                damaged[place] = is_damaged;
                transform::apply(
                    frame,
                    turn,
                    &geometry,
                    &transforms,
                    &mut slot,
                    place,
                    n,
                    host,
                )?;
            }
            Ok(())
        };
        // Frames the decoder gave past a read's last frame (a few: its reordering depth, or the end of the
        // stream drained) are held for the next read, which goes on from them without a seek.
        let mut needed = Vec::with_capacity(places.len());
        for &d in places.keys() {
            match held.iter().position(|h| h.display == d) {
                Some(i) => {
                    let h = &held[i];
                    put(d, FrameRef::Host(&h.frame), h.orientation, h.damaged)
                        .map_err(|stop| failed(stop_error(stop)))?;
                }
                None => needed.push(d),
            }
        }
        let last = places.keys().next_back().copied().unwrap_or(0);
        let mut past = Vec::new();
        if !needed.is_empty() {
            // The turn of the frame the decoder gave last (every frame is seen, needed or not).
            let turn = std::cell::Cell::new(Orientation::Upright);
            let index_ref: &FrameIndex = index;
            let mut seen = |frame: &FrameRef<'_>, damaged: bool| {
                let orientation = orienter.observe(frame);
                turn.set(orientation);
                // Host pictures past the read's last frame are kept for the next (GPU ones live only here).
                if let FrameRef::Host(picture) = frame {
                    let display = picture.pts().and_then(|pts| index_ref.display_of(pts));
                    if let Some(display) = display.filter(|&d| d > last && past.len() < MAX_HELD) {
                        if let Ok(frame) = picture.new_ref() {
                            past.push(Held {
                                display,
                                frame,
                                orientation,
                                damaged,
                            });
                        }
                    }
                }
            };
            let mut deliver = |d: u64, needed: Needed<'_>| match needed {
                Needed::Frame { frame, damaged } => put(d, frame, turn.get(), damaged),
                Needed::Missing => Ok(()), // a hole: in the outcome's `missing`
            };
            let outcome = decode_needed(
                &mut opened.demuxer,
                &mut **decoder,
                index_ref,
                &needed,
                stop,
                position,
                &mut seen,
                &mut deliver,
            )
            .map_err(|stop| failed(stop_error(stop)))?;
            self.packets += outcome.packets_decoded;
            for &d in &outcome.missing {
                if let Err(at) = self.holes.binary_search_by_key(&d, |h| h.index) {
                    self.holes
                        .insert(at, Hole::new(d, self.index.seconds_of(d)));
                }
            }
            let given = (needed.len() - outcome.missing.len()) as u64;
            let strict = self.config.strict;
            if let Some(error) = outcome.read_error(given, &self.index, strict) {
                // A remote object that could not be fetched says so, rather than the demuxer's I/O error.
                let error = match opened.failure() {
                    Some(crate::source::live::Failure::Video(source)) => source,
                    _ => error,
                };
                return Err(failed(error));
            }
        }
        // Held frames still ahead of this read stay, with the new ones.
        self.held.retain(|h| h.display > last);
        self.held.append(&mut past);
        self.held.sort_by_key(|h| h.display);
        self.held.dedup_by_key(|h| h.display);
        self.held.truncate(MAX_HELD);
        let pts: Vec<f64> = read
            .indices
            .iter()
            .map(|&d| metadata.pts_seconds(d))
            .collect();
        let durations: Vec<f64> = read
            .indices
            .iter()
            .map(|&d| metadata.duration_of(d))
            .collect();
        let transforms = &self.config.transforms;
        let batch = match output {
            Some(out) => {
                let geometry = out
                    .geometries
                    .values()
                    .next()
                    .copied()
                    .expect("one at least");
                let data = match (out.data, self.gpu.as_ref()) {
                    // Decoded on the CPU for a GPU reader (NVDEC does not take the stream): uploaded once.
                    (BatchData::Host(host), Some(gpu)) => {
                        let mut bytes = host;
                        bytes.truncate(n * out.frame_bytes);
                        BatchData::Device(gpu.upload(&bytes[..]).map_err(failed)?)
                    }
                    (mut data, _) => {
                        data.truncate(n * out.frame_bytes);
                        data
                    }
                };
                let decoded_on = if self.nvdec {
                    DecodedOn::Cuda
                } else {
                    DecodedOn::Cpu
                };
                Batch {
                    video: self.video.clone(),
                    index: 0,
                    last: true,
                    width: out.size.0,
                    height: out.size.1,
                    dtype: transforms.dtype,
                    layout: transforms.layout,
                    data,
                    sequences: vec![SequenceMeta {
                        frames: n,
                        valid_frames: n,
                        first_frame: first,
                        indices: read.indices,
                        pts,
                        damaged,
                        holes: Vec::new(),
                        ended_early: None,
                        arrivals: vec![Instant::now(); n],
                        offset: 0,
                        geometry,
                        orientation: out.orientation,
                        color: Arc::new(metadata.color.clone()),
                        video: self.video.clone(),
                        ends_video: false,
                        error_follows: false,
                        audio: None,
                    }],
                    decoded_on,
                    gap: None,
                    delivered: None,
                }
            }
            None => self.empty_batch(metadata).map_err(failed)?,
        };
        Ok(Frames { batch, durations })
    }

    /// The batch of a read that asked for nothing: no sequence, the shown size.
    fn empty_batch(&self, metadata: &VideoMetadata) -> std::result::Result<Batch, VideoError> {
        let transforms = &self.config.transforms;
        let data = match &self.gpu {
            Some(gpu) => BatchData::Device(gpu.acquire(0)?),
            None => BatchData::Host(self.pool.acquire(0)?),
        };
        Ok(Batch {
            video: self.video.clone(),
            index: 0,
            last: true,
            width: metadata.width as usize,
            height: metadata.height as usize,
            dtype: transforms.dtype,
            layout: transforms.layout,
            data,
            sequences: Vec::new(),
            decoded_on: if self.device == Device::Cpu {
                DecodedOn::Cpu
            } else {
                DecodedOn::Cuda
            },
            gap: None,
            delivered: None,
        })
    }
}

/// A stopped or failed decode as the video's error.
pub(super) fn stop_error(stop: Stop) -> VideoError {
    match stop {
        Stop::Video(error) => error,
        Stop::Shutdown => VideoError::Sampling {
            reason: "the reader was dropped during the read".into(),
        },
    }
}
