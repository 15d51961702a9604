"""What the module says of the FFmpeg it decodes with: the system's when built from source, the one inside the
module in the self-contained wheel (python/build-wheel.sh; .ci/debian13.sh checks that wheel on a clean system);
and what the installed package says of itself: its version, licence expression, classifiers and licence texts."""

import importlib.metadata
import pathlib
import re
import shutil
import subprocess

import pytest

import framefeed as ff
from conftest import ROOT, missing


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


# The package's metadata and licences, as installed (the README's `pip install ./python`, or a wheel).
PYPROJECT = ROOT / "python" / "pyproject.toml"
LICENCE_FILES = ("LICENSE-MIT", "LICENSE-APACHE", "THIRD-PARTY-NOTICES.md")


def _toml_string(path, key: str) -> str:
    """The first `key = "..."` of a TOML file (tomllib is Python 3.11+; the package supports 3.9)."""
    found = re.search(rf'^{re.escape(key)}\s*=\s*"([^"]*)"', path.read_text(), re.M)
    assert found, f"{path}: no {key}"
    return found.group(1)


def test_the_installed_metadata_is_the_projects_version_licence_and_classifiers():
    meta = importlib.metadata.metadata("framefeed")
    # One version, the crate's (pyproject.toml's is dynamic: maturin reads Cargo.toml's).
    assert meta["Version"] == _toml_string(ROOT / "Cargo.toml", "version")
    expression = meta["License-Expression"]
    assert expression == _toml_string(PYPROJECT, "license"), "the wheel was built from another pyproject.toml"
    # framefeed's own licence, and the LGPL and BSD code the self-contained wheel links in.
    assert expression.startswith("(MIT OR Apache-2.0) AND ")
    assert {"LGPL-2.1-or-later", "BSD-2-Clause"} <= set(expression.split(" AND "))
    assert set(LICENCE_FILES) <= set(meta.get_all("License-File") or [])
    classifiers = set(meta.get_all("Classifier") or [])
    assert "Typing :: Typed" in classifiers
    assert meta["Requires-Python"] == ">=3.9"
    assert {f"Programming Language :: Python :: 3.{minor}" for minor in range(9, 14)} <= classifiers
    assert not any(c.startswith("License ::") for c in classifiers), "PEP 639: the expression alone"


def test_the_installed_package_carries_its_licence_texts_and_notices():
    dist = importlib.metadata.distribution("framefeed")
    for name in LICENCE_FILES:
        text = dist.read_text(f"licenses/{name}")
        assert text, f"{name} is not in the installed package's metadata folder"
        assert text == (ROOT / name).read_text(), f"{name} differs from the repository's"
    notices = dist.read_text("licenses/THIRD-PARTY-NOTICES.md")
    for needed in ("LGPL-2.1-or-later", "Relinking", "BSD-2-Clause", "VideoLAN and dav1d authors", "| pyo3 |"):
        assert needed in notices, needed
    # `Typing :: Typed` holds: the stubs' marker is installed.
    assert (pathlib.Path(ff.__file__).parent / "py.typed").is_file()


def test_the_self_contained_wheel_carries_ffmpegs_and_dav1ds_texts():
    if "--disable-everything" not in ff.ffmpeg_build()["configuration"]:
        pytest.skip("built from source: the module links the system's FFmpeg, and carries neither its nor dav1d's code")
    vendor = pathlib.Path(ff.__file__).parent / "_vendor"
    assert "LESSER GENERAL PUBLIC LICENSE" in (vendor / "COPYING.LGPLv2.1").read_text()
    assert "VideoLAN and dav1d authors" in (vendor / "dav1d-COPYING").read_text()
    about = (vendor / "FFMPEG.txt").read_text()
    assert "LGPL version 2.1 or later" in about and "relink" in about
