"""Zero copy both ways: arrays and DLPack capsules view the pooled batch buffer and keep it alive, the buffer
returns to the pool when the last view is gone (no frame memory allocated in the steady state), and `feed`
references read-only buffers instead of copying them."""

from __future__ import annotations

import gc
import sys

import numpy as np
import pytest

import framefeed as ff
from conftest import fixture, missing


def one_batch(**keywords):
    inp = ff.VideoInput(4, 2, last_sequence_policy="pad", **keywords)
    inp.feed(fixture("h264.mp4"))
    inp.close()
    return inp, inp.next_batch()


def test_numpy_and_dlpack_views_share_the_batch_memory():
    inp, batch = one_batch()
    array = batch.numpy()
    again = np.from_dlpack(batch)
    assert array.shape == again.shape == batch.shape and np.shares_memory(array, again)
    seq = batch.sequences[1]
    view = seq.numpy()
    assert np.shares_memory(view, array) and np.array_equal(view, array[1])
    assert batch.__dlpack_device__() == (1, 0)


class Capsule:
    """Hands a capsule made by one `__dlpack__` call to `np.from_dlpack`."""

    def __init__(self, capsule, device=(1, 0)):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, **_):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


def test_the_dlpack_protocol_keywords():
    inp, batch = one_batch(dtype="float32")
    legacy, versioned = batch.__dlpack__(), batch.__dlpack__(max_version=(1, 0))
    assert '"dltensor"' in repr(legacy) and '"dltensor_versioned"' in repr(versioned)
    del legacy, versioned  # capsules no consumer took free their tensors
    array = batch.numpy()
    assert array.dtype == np.float32
    view = np.from_dlpack(Capsule(batch.__dlpack__(max_version=(1, 0))))
    assert np.shares_memory(view, array)
    copy = np.from_dlpack(Capsule(batch.__dlpack__(copy=True, dl_device=(1, 0))))
    assert np.array_equal(copy, array) and not np.shares_memory(copy, array)
    host = batch.to_host().numpy()
    assert np.array_equal(host, array) and not np.shares_memory(host, array)
    with pytest.raises(BufferError):
        batch.__dlpack__(dl_device=(2, 0))


def test_a_view_keeps_the_batch_alive_and_the_buffer_returns_to_the_pool_after_it():
    inp = ff.VideoInput(2, 1)
    for _ in range(4):
        inp.feed(fixture("h264_live.ts"))  # 100 frames each: 200 batches
    inp.close()
    held = []
    count = 0
    for i, batch in enumerate(inp):
        array = batch.numpy()
        if i < 3:
            held.append(array)  # views outliving their batch object
        del batch, array
        count += 1
    # The steady state allocated no frame memory: buffers went back to the pool as views died, so 200 batches
    # took no more buffers than can be out at once: the 3 held views, the batch being read, the one in the
    # output channel (prefetch 1), and in the assembler a full one waiting for the next frame and the one being
    # built. (How many of those are out together depends on thread timing: the bound, not an exact count.)
    assert count == 200
    assert inp.buffer_allocations <= 3 + 4
    assert all(a.shape == (1, 2, 64, 96, 3) and a.any() for a in held)


def test_feed_references_bytes_and_read_only_buffers_and_copies_writable_ones():
    data = fixture("h264.mp4")
    inp = ff.VideoInput(23, 1)
    live = inp.feed_live()  # keeps the decoder busy, so fed videos stay queued
    refs = sys.getrefcount(data)
    inp.feed(data)
    assert sys.getrefcount(data) == refs + 1, "bytes are referenced, not copied"
    frozen = np.frombuffer(bytearray(data), dtype=np.uint8).copy()
    frozen.flags.writeable = False
    base_refs = sys.getrefcount(frozen)
    inp.feed(frozen)
    assert sys.getrefcount(frozen) > base_refs, "a read-only array is referenced"
    mutable = bytearray(data)
    inp.feed(mutable)
    mutable[:] = b"\0" * len(mutable)  # copied at feed: changing it now changes nothing
    live.push(fixture("h264.ts"))
    live.finish()
    inp.close()
    frames = [b.valid_frames for b in inp]
    assert frames == [23, 23, 23, 23]
    gc.collect()
    assert sys.getrefcount(data) == refs and sys.getrefcount(frozen) == base_refs


def _free_huge_pages() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("HugePages_Free:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def test_huge_pages_give_the_same_arrays_and_count_their_buffers():
    # 2 frames of 2048x2048 RGB: a 24 MiB batch, big enough for huge pages.
    def decode(**kw):
        inp = ff.VideoInput(2, 1, resize=(2048, 2048), **kw)
        inp.feed(fixture("h264.mp4"))
        inp.close()
        arrays = [np.from_dlpack(b).copy() for b in inp]
        return arrays, inp.huge_page_allocations

    free = _free_huge_pages()
    plain, none = decode()
    huge, taken = decode(huge_pages=True)
    assert none == 0
    assert len(plain) == len(huge) == 12  # 23 frames
    assert all(np.array_equal(a, b) for a, b in zip(plain, huge))
    if free >= 64:
        assert taken >= 1, f"{free} reserved huge pages were free and no buffer took them"
    else:
        assert taken == 0
        missing("hugepages", f"{free} reserved huge pages are free (sysctl vm.nr_hugepages=64): only the fallback "
                "to ordinary memory was tested")
