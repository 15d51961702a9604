"""Frames as people see them, through Python: videos turned by a display matrix come out upright (byte for byte the
ffmpeg CLI's default decode; ``autorotate=False`` its ``-noautorotate`` one), the turn reported by ``probe`` and
each sequence; a damaged start numbered as a full decode numbers it; a change of frame size splitting a sampled
sequence; every sampling mode exact on each; ``clip_policy``."""

from __future__ import annotations

import hashlib
import subprocess
from typing import Dict, List, Optional, Tuple

import pytest

import framefeed as ff
from conftest import FIXTURES, SHARED, fixture, needs_ffmpeg

TURNED = {
    "rotated_90.mp4": "rotate270",
    "rotated_180.mp4": "rotate180",
    "rotated_270.mp4": "rotate90",
    "hflip.mp4": "hflip",
    "vflip.mp4": "vflip",
    "transpose.mp4": "transpose",
    "transverse.mp4": "transverse",
    "rotated_90_hevc10.mp4": "rotate270",
    "rotated_270_yuv422.mp4": "rotate90",
}
AWKWARD = list(TURNED) + ["cut_start.ts", "res_change.ts", "res_change.h264"]


def ffmpeg_md5s(name: str, before: Tuple[str, ...] = ()) -> List[str]:
    """The ffmpeg CLI's rgb24 frames of a fixture as MD5s, each at its own size (-autoscale 0)."""
    needs_ffmpeg()
    out = subprocess.run(
        ["ffmpeg", "-v", "quiet", "-threads", "2", *before, "-i", str(FIXTURES / name), "-noautoscale",
         "-fps_mode", "passthrough", "-f", "framemd5", "-pix_fmt", "rgb24", "-"],
        check=True, capture_output=True, text=True,
    ).stdout
    return [line.rsplit(",", 1)[1].strip() for line in out.splitlines() if not line.startswith("#")]


def sequences(name: str, length: int = 3, **keywords) -> List[List[Tuple[int, str, str]]]:
    """Every sequence of a decode: (display index, MD5 of the frame's RGB bytes, orientation) per real frame."""
    inp = ff.VideoInput(length, 2, **keywords)
    inp.feed(fixture(name), label=name)
    inp.close()
    out = []
    for batch in inp:
        for seq in batch.sequences:
            frames = seq.numpy()[: seq.valid_frames]
            out.append([(i, hashlib.md5(f.tobytes()).hexdigest(), seq.orientation)
                        for i, f in zip(seq.indices, frames)])
    return out


@pytest.mark.parametrize("name", list(TURNED))
def test_turned_videos_are_the_clis_upright_frames_and_say_their_turn(name: str) -> None:
    stream = ff.probe(FIXTURES / name)["streams"][0]
    assert stream["orientation"] == TURNED[name]
    assert isinstance(stream["rotation"], float)
    frames = [f for seq in sequences(name) for f in seq]
    assert [md5 for _, md5, _ in frames] == ffmpeg_md5s(name)
    assert {o for _, _, o in frames} == {TURNED[name]}
    coded = [f for seq in sequences(name, autorotate=False) for f in seq]
    assert [md5 for _, md5, _ in coded] == ffmpeg_md5s(name, ("-noautorotate",))
    assert {o for _, _, o in coded} == {"none"}


def test_the_shown_shape_and_an_unturned_video() -> None:
    inp = ff.VideoInput(4, 1)
    inp.feed(fixture("rotated_90.mp4"))
    inp.feed(fixture("h264_100x60.mp4"))
    inp.close()
    shapes = {(b.video_id, b.frame_shape, b.sequences[0].orientation) for b in inp}
    assert shapes == {(0, (100, 60, 3), "rotate270"), (1, (60, 100, 3), "none")}
    assert ff.probe(FIXTURES / "h264_100x60.mp4")["streams"][0]["rotation"] is None


SAMPLINGS: List[Dict[str, object]] = [
    dict(stride=2),
    dict(stride=3, step=2),
    dict(clips=4, stride=2, seed=5),
    dict(clips=3, clip_sampler="regular"),
    dict(fps=7.0),
    dict(start=0.03),
]


@pytest.mark.parametrize("name", AWKWARD)
def test_every_sampling_mode_gives_the_clis_frames_at_the_reported_indices(name: str) -> None:
    reference = ffmpeg_md5s(name)
    n = len(reference)
    plain = [i for seq in sequences(name) for i, _, _ in seq]
    assert plain == list(range(n)), f"{name}: plain numbering"
    for keywords in SAMPLINGS + [dict(indices=[0, 1, 1, n // 2, n - 1])]:
        seqs = sequences(name, **keywords)
        assert seqs, f"{name}: nothing under {keywords}"
        for i, md5, _ in (f for seq in seqs for f in seq):
            assert reference[i] == md5, f"{name}: frame {i} under {keywords} is not the CLI's"
        if keywords == dict(stride=2):
            for seq in seqs:
                assert all(b[0] == a[0] + 2 for a, b in zip(seq, seq[1:])), f"{name}: {seq}"


def test_a_damaged_start_is_numbered_from_the_first_frame_a_decode_gives() -> None:
    first = sequences("cut_start.ts")[0][0]
    got = sequences("cut_start.ts", indices=[0, 1])
    assert [[i for i, _, _ in s] for s in got] == [[0, 1]]
    assert got[0][0] == first
    assert [[i for i, _, _ in s] for s in sequences("cut_start.ts", start=0.0, end=0.2)] == [[0, 1, 2], [3, 4]]
    assert len(sequences("cut_start.ts", clips=3)) == 3
    parts = ff.segments(FIXTURES / "cut_start.ts", 10)
    assert parts[0][0] == 0 and parts[-1][1] == sum(len(s) for s in sequences("cut_start.ts"))


def test_a_size_change_splits_a_sampled_sequence_at_the_change() -> None:
    # res_change.h264: 10 frames of 96x64, then 7 of 64x48.
    inp = ff.VideoInput(4, 2, stride=2)
    inp.feed(fixture("res_change.h264"))
    inp.close()
    got = [(seq.indices, batch.frame_shape[:2]) for batch in inp for seq in batch.sequences]
    assert got == [([0, 2, 4, 6], (64, 96)), ([4, 6, 8], (64, 96)), ([10], (48, 64)), ([8], (64, 96)),
                   ([10, 12, 14], (48, 64)), ([12, 14, 16], (48, 64)), ([16], (48, 64))]


@pytest.mark.parametrize(
    "policy, want",
    [("cut", [0, 5, 10]), ("repeat_last", [0, 5, 10, 10]), ("wrap", [0, 5, 10, 0]), (None, [0, 5, 10])],
)
def test_clips_that_cannot_fit_follow_the_clip_policy(policy: Optional[str], want: List[int]) -> None:
    keywords = {} if policy is None else {"clip_policy": policy}
    got = sequences("rotated_180.mp4", 4, clips=3, stride=5, **keywords)  # 12 frames, a clip spans 16
    assert [[i for i, _, _ in s] for s in got] == [want] * 3


def test_a_clip_policy_of_error_fails_the_video_and_bad_names_are_refused() -> None:
    inp = ff.VideoInput(4, 1, clips=2, stride=5, clip_policy="error")
    inp.feed(fixture("rotated_180.mp4"), label="short")
    inp.close()
    with pytest.raises(ff.VideoError, match="a clip spans 16 frames") as caught:
        inp.next_batch()
    assert caught.value.label == "short"
    with pytest.raises(ValueError, match="clip_policy is 'loop'; allowed: 'cut', 'repeat_last', 'wrap', 'error'"):
        ff.VideoInput(4, 1, clips=2, clip_policy="loop")  # type: ignore[arg-type]


@pytest.mark.needs("corpus", "ffmpeg")
@pytest.mark.parametrize("name", ["video_180.mov", "video_270.mov"])
def test_the_corpus_phone_clips_are_upright(name: str) -> None:
    needs_ffmpeg()
    path = SHARED / "rotated" / name
    out = subprocess.run(
        ["ffmpeg", "-v", "quiet", "-i", str(path), "-fps_mode", "passthrough", "-f", "framemd5", "-pix_fmt",
         "rgb24", "-"], check=True, capture_output=True, text=True).stdout
    reference = [line.rsplit(",", 1)[1].strip() for line in out.splitlines() if not line.startswith("#")]
    inp = ff.VideoInput(3, 1)
    inp.feed(path.read_bytes())
    inp.close()
    ours = [hashlib.md5(f.tobytes()).hexdigest() for b in inp for s in b.sequences for f in s.numpy()[: s.valid_frames]]
    assert ours == reference
