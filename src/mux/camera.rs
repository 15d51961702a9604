//! One camera's feeder: a thread that polls the camera's own operator (one sequence a batch) and queues each
//! ready sequence in the mux's [`Gather`](super::gather::Gather), waiting for room in every-frame mode (so
//! backpressure reaches the camera's decoder, its buffers and its source), and records how the camera ended.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::gather::Ready;
use super::Shared;
use crate::assembly::batch::Batch;
use crate::error::Error;
use crate::operator::handle::VideoInput;

/// How often a feeder looks at its stop signals while it waits (for a sequence, or for room).
const POLL: Duration = Duration::from_millis(50);

/// What makes two sequences able to share a batch tensor: their shape, element type and layout.
fn shape_key(batch: &Batch) -> super::gather::ShapeKey {
    let shape = batch.sequences().first().map_or([0; 4], |s| s.shape());
    (shape, format!("{:?}/{:?}", batch.dtype(), batch.layout()))
}

/// Runs camera `camera` until its video ends, fails, or it is stopped (removed, or the mux dropped).
pub(super) fn feed(
    shared: Arc<Shared>,
    camera: u64,
    input: Arc<VideoInput>,
    stop: Arc<AtomicBool>,
) {
    let stopped = || stop.load(Ordering::Relaxed) || shared.stop.load(Ordering::Relaxed);
    let ended = loop {
        if stopped() {
            break None;
        }
        match input.next_batch_timeout(POLL) {
            Err(Error::Timeout(_)) => {}
            Ok(Some(batch)) => {
                let entry = Ready {
                    key: shape_key(&batch),
                    item: batch,
                    at: Instant::now(),
                };
                let mut state = shared.state.lock();
                while !state.gather.has_room(camera) {
                    if stopped() {
                        drop(state);
                        return finish(&shared, input);
                    }
                    shared.changed.wait_for(&mut state, POLL);
                }
                state.gather.push(camera, entry);
                if let Some(info) = state.cameras.get_mut(&camera) {
                    info.sequences += 1;
                }
                drop(state);
                shared.notify();
            }
            Ok(None) => break Some(None),
            Err(error) => break Some(Some(error)),
        }
    };
    if let Some(error) = ended {
        // A removed camera tells nothing (its stop is set under the same lock).
        let mut state = shared.state.lock();
        if !stop.load(Ordering::Relaxed) {
            state.ended.push_back((camera, error));
        }
        drop(state);
        shared.notify();
    }
    finish(&shared, input);
}

/// The camera's operator is dropped off the mux's lock (dropping its last owner joins its decoding thread),
/// and the camera no longer counts as live.
fn finish(shared: &Shared, input: Arc<VideoInput>) {
    drop(input);
    shared.state.lock().live -= 1;
    shared.notify();
}
