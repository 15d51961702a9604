"""What the module says of the FFmpeg it decodes with: the system's when built from source, the one inside the
module in the self-contained wheel (python/build-wheel.sh; .ci/debian13.sh checks that wheel on a clean system)."""

import re
import shutil
import subprocess

import pytest

import framefeed as ff
from conftest import missing


def test_ffmpeg_build_names_a_supported_release_and_its_licence():
    build = ff.ffmpeg_build()
    assert set(build) == {"version", "configuration", "license", "libavcodec", "protocols"}
    assert {"file", "http", "tcp", "udp", "rtp", "rtmp"} <= set(build["protocols"])
    assert (59, 37, 0) <= build["libavcodec"] < (62, 0, 0), "FFmpeg 5.1 to 7.1"
    assert build["version"] and build["license"]
    if "--disable-everything" in build["configuration"]:  # the self-contained wheel
        assert build["license"].startswith("LGPL")
        assert "--enable-gpl" not in build["configuration"]


def test_a_module_built_from_source_decodes_with_the_systems_ffmpeg():
    build = ff.ffmpeg_build()
    if "--disable-everything" in build["configuration"]:
        pytest.skip("the self-contained wheel carries its own FFmpeg")
    if shutil.which("ffmpeg") is None:
        missing("ffmpeg", "the ffmpeg CLI is absent: the module's FFmpeg was not compared with it")
    out = subprocess.run(["ffmpeg", "-hide_banner", "-version"], check=True, capture_output=True, text=True).stdout
    found = re.search(r"^libavcodec\s+(\d+)\.\s*(\d+)\.\s*(\d+)", out, re.M)
    assert found, out
    assert build["libavcodec"] == tuple(int(g) for g in found.groups())


def test_a_url_whose_protocol_the_ffmpeg_lacks_fails_at_once_naming_it():
    missing = next((p for p in ("srt", "https") if p not in ff.ffmpeg_build()["protocols"]), None)
    if missing is None:
        pytest.skip("the linked FFmpeg has both srt and https (a source build): nothing is missing to refuse")
    inp = ff.VideoInput(8, 1)
    inp.feed_url(f"{missing}://127.0.0.1:9/stream", reconnect=40)
    inp.close()
    with pytest.raises(ff.VideoError, match=f"has no {missing} protocol"):
        for _ in inp:
            pass
