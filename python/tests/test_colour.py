"""Colour metadata (issue 62): `probe()` and `VideoReader.metadata.color` report bit depth, primaries, transfer
(SDR, PQ, HLG), matrix, range and HDR static metadata as `ffprobe` does, on the HDR fixtures
(`tests/fixtures/make.sh`) and an SDR one."""

from __future__ import annotations

import json
import subprocess
from fractions import Fraction

import pytest

import framefeed as ff
from conftest import FIXTURES, fixture, needs_ffmpeg

HDR = [
    ("hdr_pq_hevc10.mp4", "pq", 10),
    ("hdr_pq_hevc12.mkv", "pq", 12),
    ("hdr_hlg_hevc10_422.mp4", "hlg", 10),
    ("hdr_hlg_vp9_10.webm", "hlg", 10),
]


def ffprobe(name: str) -> dict:
    needs_ffmpeg()
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_streams", "-of", "json", str(FIXTURES / name)],
        check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out)["streams"][0]


def named(value):
    return None if value in (None, "unknown", "unspecified") else value


@pytest.mark.parametrize("name,dynamic_range,depth", HDR + [("h264_bt709.mp4", "sdr", 8)])
def test_reader_and_probe_report_ffprobes_colour(name: str, dynamic_range: str, depth: int) -> None:
    want = ffprobe(name)
    color = ff.VideoReader(fixture(name)).metadata.color
    assert color["dynamic_range"] == dynamic_range
    assert color["bit_depth"] == depth
    assert (color["primaries"], color["transfer"], color["matrix"], color["range"]) == (
        named(want.get("color_primaries")), named(want.get("color_transfer")),
        named(want.get("color_space")), named(want.get("color_range")))
    stream = ff.probe(FIXTURES / name)["streams"][0]
    assert (stream["color_primaries"], stream["color_transfer"], stream["color_space"], stream["color_range"],
            stream["bit_depth"], stream["dynamic_range"]) == (
        color["primaries"], color["transfer"], color["matrix"], color["range"], depth, dynamic_range)
    assert stream["mastering_display"] == color["mastering_display"]
    assert stream["content_light"] == color["content_light"]


def test_hdr10_static_metadata_as_ffprobe_reads_it() -> None:
    want = {s["side_data_type"]: s for s in ffprobe("hdr_pq_hevc10.mp4")["side_data_list"]}
    m = want["Mastering display metadata"]
    color = ff.VideoReader(fixture("hdr_pq_hevc10.mp4")).metadata.color
    got = color["mastering_display"]
    assert got is not None
    assert got["primaries"] == [
        (float(Fraction(m[f"{c}_x"])), float(Fraction(m[f"{c}_y"]))) for c in ("red", "green", "blue")]
    assert got["white_point"] == (float(Fraction(m["white_point_x"])), float(Fraction(m["white_point_y"])))
    assert (got["min_luminance"], got["max_luminance"]) == (
        float(Fraction(m["min_luminance"])), float(Fraction(m["max_luminance"])))
    light = want["Content light level metadata"]
    assert color["content_light"] == {"max_cll": light["max_content"], "max_fall": light["max_average"]}
    # The other fixtures carry none in their containers.
    assert ff.VideoReader(fixture("hdr_hlg_vp9_10.webm")).metadata.color["mastering_display"] is None


@pytest.mark.parametrize("name", [name for name, _, _ in HDR])
def test_every_sequence_carries_its_videos_colour(name: str) -> None:
    want = ff.VideoReader(fixture(name)).metadata.color
    inp = ff.VideoInput(sequence_length=3, batch_size=2)
    inp.feed(fixture(name))
    inp.close()
    colors = [seq.color for batch in inp for seq in batch.sequences]
    assert len(colors) == 3  # 8 frames: 3 + 3 + 2
    assert all(c == want for c in colors)
