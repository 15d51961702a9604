"""Remote videos read by byte ranges (issue 72), against real servers these tests start on loopback and stop:
an S3 server (rclone's ``serve s3``, SigV4 keys, range GETs) for ``s3://`` through ``AWS_ENDPOINT_URL`` and
through ``storage_options``, and nginx over HTTP (HTTPS, with a private CA, and the faults are held by the Rust
tests, tests/remote_videos.rs). In every API that takes a path: the frames equal the local file's; the bytes the
server sent (nginx's log) are those of the index and the needed GOPs, not the file."""

from __future__ import annotations

import json
import os
import pathlib
import pickle
import shutil
import subprocess
import warnings
from typing import Dict, Iterator, List

import numpy as np
import pytest

import framefeed as ff

from conftest import S3_KEY as KEY
from conftest import S3_SECRET as SECRET
from conftest import ByteCounter, cli, missing, needs_ffmpeg, require_module, serve_s3
from conftest import free_port as _free_port
from conftest import wait_for_port as _wait_for


@pytest.fixture(scope="module")
def video(tmp_path_factory) -> pathlib.Path:
    """20 s of 640x360 H.264 with B-frames, a keyframe a second, its moov at the end."""
    needs_ffmpeg()
    root = tmp_path_factory.mktemp("remote")
    bucket = root / "videos"
    bucket.mkdir()
    path = bucket / "clip.mp4"
    subprocess.run(
        ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30", "-frames:v", "600",
         "-c:v", "libx264", "-preset", "ultrafast", "-crf", "12", "-g", "30", "-bf", "2", "-pix_fmt", "yuv420p",
         str(path)],
        check=True,
    )
    # Bucket `set`: a prefix to list (hidden entries among its objects), an MP4 to cut into segments by its
    # index, and a Matroska copy that has none to read it by.
    listed = root / "set"
    (listed / "sub").mkdir(parents=True)
    (listed / ".cache").mkdir()
    for name in ("a.mp4", "sub/b.mp4", ".hidden.mp4", ".cache/c.mp4"):
        shutil.copyfile(path, listed / name)
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", str(path), "-c", "copy", str(listed / "c.mkv")], check=True)
    return path


@pytest.fixture(scope="module")
def s3(video: pathlib.Path) -> Iterator[Dict[str, str]]:
    """``rclone serve s3`` over the video's directory's parent (bucket ``videos``, and ``set``: a prefix to
    list): its endpoint, keys and region, as ``storage_options``."""
    with serve_s3(video.parent.parent) as options:
        yield options


class Nginx:
    def __init__(self, root: pathlib.Path, directory: pathlib.Path) -> None:
        self.directory = directory
        self.port = _free_port()
        d = directory
        (d / "nginx.conf").write_text(
            f"""user root root; worker_processes 1; daemon off; pid {d}/nginx.pid; error_log {d}/error.log;
events {{}}
http {{
  log_format ranges '$request_method $http_range $status $body_bytes_sent';
  access_log {d}/access.log ranges;
  client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fcgi;
  uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
  server {{ listen 127.0.0.1:{self.port}; root {root}; }}
}}
"""
        )
        self.process = subprocess.Popen(
            [self.binary(), "-c", str(d / "nginx.conf"), "-p", str(d)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        _wait_for(self.port, self.process, "nginx")

    @staticmethod
    def binary() -> str:
        found = shutil.which("nginx") or next(
            (p for p in ("/usr/sbin/nginx", "/usr/bin/nginx") if os.path.exists(p)), None
        )
        if found is None:
            missing("nginx", "nginx is not installed")
        return str(found)

    def log(self) -> List[List[str]]:
        path = self.directory / "access.log"
        return [line.split(" ") for line in path.read_text().splitlines()] if path.exists() else []

    def clear(self) -> None:
        (self.directory / "access.log").write_text("")

    def bytes_sent(self) -> int:
        return sum(int(fields[3]) for fields in self.log())

    def stop(self) -> None:
        # TERM to the master, which stops its workers (a KILL would leave them running, holding the port).
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def http(video: pathlib.Path, tmp_path_factory) -> Iterator[Nginx]:
    Nginx.binary()
    server = Nginx(video.parent.parent, tmp_path_factory.mktemp("nginx"))
    try:
        yield server
    finally:
        server.stop()


INDICES = [i + k for i in (37, 166, 288, 455, 580) for k in range(4)]


def local(video: pathlib.Path, **keywords) -> np.ndarray:
    return ff.VideoReader(str(video), **keywords).get_frames_at(INDICES).data


def test_reader_over_s3_with_storage_options_and_with_the_environment(video, s3, monkeypatch) -> None:
    want = local(video)
    reader = ff.VideoReader("s3://videos/clip.mp4", storage_options=s3)
    assert len(reader) == 600
    assert np.array_equal(reader.get_frames_at(INDICES).data, want)
    # As the clouds' own tools read them.
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3["endpoint_url"])
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    assert np.array_equal(ff.VideoReader("s3://videos/clip.mp4").get_frames_at(INDICES).data, want)
    # Wrong keys: the video fails, naming it, with the store's reason.
    with pytest.raises(ff.VideoError) as refused:
        ff.VideoReader("s3://videos/clip.mp4", storage_options=dict(s3, secret="wrong"))
    assert refused.value.code == "source_unavailable"
    assert "s3://videos/clip.mp4" in str(refused.value)


def test_s3_reads_fetch_by_ranges_from_a_server_that_answers_them_with_200(video, s3) -> None:
    # rclone's S3 server answers a ranged GET with status 200, the bytes asked for and a Content-Range saying so:
    # taken as the 206 it is, the video is read by ranges (the index and the needed GOPs), not through.
    port = int(s3["endpoint_url"].rsplit(":", 1)[1])
    with ByteCounter(port) as counter:
        options = dict(s3, endpoint_url=f"http://127.0.0.1:{counter.port}")
        reader = ff.VideoReader("s3://videos/clip.mp4", storage_options=options)
        assert np.array_equal(reader.get_frames_at(INDICES).data, local(video))
        assert 0 < counter.sent < video.stat().st_size * 0.6, (counter.sent, video.stat().st_size)


def test_errors_name_the_url_without_its_credentials_or_query(http) -> None:
    # What a request's failure says, the object store's words included, keeps no password or signature, and
    # leaves out the server's HTML page.
    url = f"http://user:pw-SECRET1@127.0.0.1:{http.port}/videos/missing.mp4?X-Amz-Signature=SECRET2"
    with pytest.raises(ff.VideoError) as missing_object:
        ff.VideoReader(url)
    said = str(missing_object.value)
    assert missing_object.value.code == "source_unavailable"
    assert "SECRET" not in said and "<html" not in said.lower(), said
    assert f"http://…@127.0.0.1:{http.port}/videos/missing.mp4?…" in said and "404" in said, said


def test_reader_over_http_fetches_the_index_and_the_needed_gops_only(video, http) -> None:
    want = local(video)
    http.clear()
    reader = ff.VideoReader(f"http://127.0.0.1:{http.port}/videos/clip.mp4")
    assert np.array_equal(reader.get_frames_at(INDICES).data, want)
    log = http.log()
    assert [f[0] for f in log].count("HEAD") == 0  # opened by its first bytes: that GET says its length
    assert all(f[1] != "-" and not f[1].endswith("-") for f in log if f[0] == "GET"), log
    assert http.bytes_sent() < video.stat().st_size * 0.6, (http.bytes_sent(), video.stat().st_size)


def test_a_matroska_video_read_through_once_opens_again_from_the_index_cache(video, http, tmp_path) -> None:
    # Matroska has no index framefeed lists by ranges: the first opening reads it through, and the index
    # cache keeps the packet index that gave, so the next opening reads only what the frames need.
    mkv = video.parent.parent / "set" / "c.mkv"
    want = local(mkv)
    url = f"http://127.0.0.1:{http.port}/set/c.mkv"
    http.clear()
    scans = ff.remote_index_scans()
    with pytest.warns(RuntimeWarning, match="read through once to index it"):
        first = ff.VideoReader(url, index_cache=str(tmp_path))
    assert ff.remote_index_scans() == scans + 1
    assert http.bytes_sent() >= mkv.stat().st_size * 0.9
    assert np.array_equal(first.get_frames_at(INDICES).data, want)
    del first
    http.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no read-through warning: the index is the cache's
        again = ff.VideoReader(url, index_cache=str(tmp_path))
    assert ff.remote_index_scans() == scans + 1
    assert len(again) == 600
    assert np.array_equal(again.get_frames_at(INDICES).data, want)
    assert [f[0] for f in http.log()][:1] == ["HEAD"]
    assert http.bytes_sent() < mkv.stat().st_size * 0.6, (http.bytes_sent(), mkv.stat().st_size)


def test_the_approximate_seek_mode_reads_a_matroska_video_by_its_cues(video, http) -> None:
    # seek_mode="approximate" (TorchCodec's name) numbers a remote Matroska video by time from its Cues: on this
    # constant frame rate the exact frames, without reading it through.
    mkv = video.parent.parent / "set" / "c.mkv"
    want = local(mkv)
    url = f"http://127.0.0.1:{http.port}/set/c.mkv"
    http.clear()
    reader = ff.VideoReader(url, seek_mode="approximate")
    assert len(reader) == 600
    assert np.array_equal(reader.get_frames_at(INDICES).data, want)
    assert http.bytes_sent() < mkv.stat().st_size * 0.6, (http.bytes_sent(), mkv.stat().st_size)
    # A pickled reader keeps it.
    again = pickle.loads(pickle.dumps(reader))
    assert np.array_equal(again.get_frames_at(INDICES).data, want)
    # Every API takes it as a storage option: the operator's clips, by time, are the local file's.
    def clips(feed) -> List[np.ndarray]:
        inp = ff.VideoInput(8, 2, clips=3, seed=5, storage_options={"seek_mode": "approximate"})
        feed(inp)
        inp.close()
        return [f for batch in inp for seq in batch.sequences for f in seq.numpy()[: seq.valid_frames]]
    want_clips = clips(lambda inp: inp.feed_file(str(mkv)))
    http.clear()
    got = clips(lambda inp: inp.feed_url(url))
    assert len(got) == len(want_clips) == 24
    assert all(np.array_equal(a, b) for a, b in zip(got, want_clips))
    assert http.bytes_sent() < mkv.stat().st_size * 0.6, (http.bytes_sent(), mkv.stat().st_size)
    with pytest.raises(ValueError, match="seek_mode"):
        ff.VideoReader(url, storage_options={"seek_mode": "nearest"})
    binary = cli()
    if binary is None:
        pytest.skip("the Rust CLI is not built (cargo build --features cli): the CLI part did not run")
    for mode, most in (("approximate", 0.6), ("exact", None)):
        http.clear()
        out = subprocess.run(
            [str(binary), "run", "--clips", "3", "-L", "4", "--json", "--seek-mode", mode, url],
            check=True, capture_output=True, text=True,
        ).stdout
        assert '"failed_videos":0' in out and '"frames":12' in out, out
        if most is not None:
            assert http.bytes_sent() < mkv.stat().st_size * most, (mode, http.bytes_sent())
        else:
            assert http.bytes_sent() >= mkv.stat().st_size * 0.9, (mode, http.bytes_sent())


def test_an_fsspec_file_object_of_a_matroska_video_is_read_by_its_cues_in_the_approximate_mode(video, http) -> None:
    require_module("fsspec.implementations.http", "the approximate seek mode test of a file object")
    import fsspec
    mkv = video.parent.parent / "set" / "c.mkv"
    want = local(mkv)
    for mode, most in (("approximate", 0.6), ("exact", None)):
        http.clear()
        with fsspec.open(f"http://127.0.0.1:{http.port}/set/c.mkv", "rb", block_size=1 << 18) as f:
            reader = ff.VideoReader(f, seek_mode=mode)
            assert len(reader) == 600
            assert np.array_equal(reader.get_frames_at(INDICES).data, want)
        if most is None:
            assert http.bytes_sent() >= mkv.stat().st_size * 0.9, (mode, http.bytes_sent())
        else:
            assert http.bytes_sent() < mkv.stat().st_size * most, (mode, http.bytes_sent(), mkv.stat().st_size)


def test_an_fsspec_file_object_over_http_is_read_lazily(video, http) -> None:
    fsspec = require_module("fsspec.implementations.http", "the fsspec file object test")
    import fsspec
    want = local(video)
    http.clear()
    with fsspec.open(f"http://127.0.0.1:{http.port}/videos/clip.mp4", "rb", block_size=1 << 18) as f:
        reader = ff.VideoReader(f)
        assert np.array_equal(reader.get_frames_at(INDICES).data, want)
    assert http.bytes_sent() < video.stat().st_size * 0.8, (http.bytes_sent(), video.stat().st_size)


def test_operator_feeds_by_url_and_by_path_over_s3_and_http_equal_the_file(video, s3, http) -> None:
    def decode(feed) -> List[np.ndarray]:
        inp = ff.VideoInput(8, 2, clips=5, seed=3, storage_options=s3)
        feed(inp)
        inp.close()
        frames = []
        for batch in inp:
            for seq in batch.sequences:
                frames.extend(seq.numpy()[: seq.valid_frames])
        return frames

    want = decode(lambda inp: inp.feed_file(str(video), position=0))
    assert len(want) == 40
    for feed in (
        lambda inp: inp.feed_file("s3://videos/clip.mp4", position=0),
        lambda inp: inp.feed_url("s3://videos/clip.mp4"),
        lambda inp: inp.feed_url(f"http://127.0.0.1:{http.port}/videos/clip.mp4"),
    ):
        got = decode(feed)
        assert len(got) == len(want) and all(np.array_equal(a, b) for a, b in zip(got, want))


def test_torch_datasets_read_remote_paths(video, s3) -> None:
    torch = require_module("torch", "the torch dataset test")
    import framefeed.torch as fft

    paths = ["s3://videos/clip.mp4"]
    sampler = fft.clip_indices(4, stride=2)
    dataset = fft.VideoClipDataset(paths, sampler, seed=3, storage_options=s3)
    local_set = fft.VideoClipDataset([str(video)], sampler, seed=3)
    for i in range(len(dataset)):
        assert torch.equal(dataset[i][0], local_set[i][0])
    iterable = fft.VideoDataset(paths, 8, 4, storage_options=s3)
    frames = sum(sum(info["valid_frames"]) for _, info in iterable)
    assert frames == 600
    # Cut into segments from its index read by ranges: every frame once, as the local file's segments.
    cut = fft.VideoDataset(paths, 8, 4, storage_options=s3, segment_frames=150, shuffle=False)
    assert [u.segment for u in cut.units] == ff.segments(str(video), 150)
    firsts = sorted(f for _, info in cut for f in info["first_frame"])
    assert firsts == list(range(0, 600, 8))


def test_ray_decoder_reads_remote_uris_by_ranges(video, s3) -> None:
    require_module("ray", "the Ray decoder test")
    import framefeed.ray as ffr

    decoder = ffr.Decoder(16, clips=2, storage_options=s3)
    rows = [row for block in decoder({"path": np.array(["s3://videos/clip.mp4"])}) for row in _rows(block)]
    assert len(rows) == 2 and all(r["error"] in (None, "") for r in rows)
    reader = ff.VideoReader(str(video))
    for row in rows:
        assert np.array_equal(row["frames"], reader.get_frames_at(list(row["indices"])).data)


def test_prefixes_are_listed_and_remote_mp4s_cut_by_their_index(video, s3) -> None:
    """``list_remote`` lists a prefix as ``read_videos`` does a directory (name order, hidden entries left out)
    with the storage options the videos are read with; the dataset planners cut a remote MP4 into the segments
    of the local file, from its index read by ranges, and leave a remote Matroska whole rather than read it
    through."""
    import framefeed._units as units

    want = ["s3://set/a.mp4", "s3://set/c.mkv", "s3://set/sub/b.mp4"]
    assert ff.list_remote("s3://set/", storage_options=s3) == want
    assert ff.list_remote("s3://set", storage_options=s3) == want
    assert ff.list_remote("s3://videos/clip.mp4", storage_options=s3) == ["s3://videos/clip.mp4"]
    assert ff.list_remote("https://example.invalid/v.mp4") == ["https://example.invalid/v.mp4"]
    with pytest.raises(ff.VideoError) as nothing:
        ff.list_remote("s3://set/none/", storage_options=s3)
    assert nothing.value.code == "source_unavailable" and "s3://set/none/" in str(nothing.value)
    with pytest.raises(ff.VideoError):
        ff.list_remote("s3://set/", storage_options=dict(s3, secret="wrong"))

    local_parts = ff.segments(str(video), 150)
    assert len(local_parts) == 4
    assert ff.segments("s3://set/a.mp4", 150, storage_options=s3) == local_parts
    plan = units.plan(want, 150, storage_options=s3)
    assert [(u.path, u.segment) for u in plan] == [("s3://set/a.mp4", p) for p in local_parts] + [
        ("s3://set/c.mkv", None)] + [("s3://set/sub/b.mp4", p) for p in local_parts]
    assert all(u.frames == p[1] - p[0] for u, p in zip(plan, local_parts))
    # A URL it cannot open stays whole (its decoder reports why).
    assert units.plan(["s3://set/none.mp4"], 150, storage_options=s3) == [units.Unit("s3://set/none.mp4", 0, None)]


def test_read_videos_lists_and_cuts_an_s3_prefix(video, s3) -> None:
    """``framefeed.ray.read_videos("s3://set/")``: the prefix listed with ``storage_options``, the MP4s cut,
    every sequence of every video once, frames equal to the local file's."""
    ray = require_module("ray", "the Ray prefix test")
    import framefeed.ray as ffr

    assert ffr._list_files(["s3://set/"], s3) == ["s3://set/a.mp4", "s3://set/c.mkv", "s3://set/sub/b.mp4"]
    with pytest.raises(FileNotFoundError, match="s3://set/none/"):
        ffr._list_files(["s3://set/none/"], s3)
    # A cluster of its own ("local": never one another test or process started).
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        ray.data.DataContext.get_current().enable_progress_bars = False
        dataset = ffr.read_videos("s3://set/", sequence_length=50, segment_frames=150, concurrency=2,
                                  storage_options=s3)
        rows = list(dataset.iter_rows())
    finally:
        ray.shutdown()
    reader = ff.VideoReader(str(video))
    by: Dict[str, List[Dict[str, object]]] = {}
    for row in rows:
        assert not row.get("error"), row["error"]
        by.setdefault(row["path"], []).append(row)
    assert sorted(by) == ["s3://set/a.mp4", "s3://set/c.mkv", "s3://set/sub/b.mp4"]
    cut = [tuple(p) for p in ff.segments(str(video), 150)]
    assert sorted({tuple(r["segment"]) for r in by["s3://set/a.mp4"]}) == cut
    assert [tuple(r["segment"]) for r in by["s3://set/c.mkv"]] == [(0, -1)] * 12
    for path, got in by.items():
        got.sort(key=lambda r: r["first_frame"])
        assert [r["first_frame"] for r in got] == list(range(0, 600, 50)), path
        for row in got[::5]:
            first = int(row["first_frame"])
            assert np.array_equal(row["frames"], reader.get_frames_at(list(range(first, first + 50))).data)


def _rows(block) -> Iterator[Dict[str, object]]:
    keys = list(block)
    for i in range(len(block[keys[0]])):
        yield {k: block[k][i] for k in keys}


def test_compat_decord_and_the_cli_read_s3(video, s3, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3["endpoint_url"])
    from framefeed.compat import decord

    # probe and segments read the index by ranges too.
    assert ff.probe("s3://videos/clip.mp4")["streams"][0]["codec"] == "h264"
    assert ff.segments("s3://videos/clip.mp4", 200) == ff.segments(str(video), 200)

    remote = decord.VideoReader("s3://videos/clip.mp4")
    assert np.array_equal(remote.get_batch([5, 300]).asnumpy(), decord.VideoReader(str(video)).get_batch([5, 300]).asnumpy())
    binary = cli()
    if binary is None:
        pytest.skip("the Rust CLI is not built (cargo build --features cli): the CLI part did not run")
    cache = tmp_path / "index"
    for _ in range(2):
        out = subprocess.run(
            [str(binary), "run", "--clips", "3", "-L", "4", "--json", "--index-cache", str(cache), "s3://videos/clip.mp4"],
            check=True, capture_output=True, text=True, env=os.environ,
        ).stdout
        assert '"failed_videos":0' in out and '"frames":12' in out, out
    assert any(cache.iterdir()), "the index cache kept the video's index"
    info = subprocess.run([str(binary), "info", "s3://videos/clip.mp4"], check=True, capture_output=True, text=True,
                          env=os.environ).stdout
    assert '"h264"' in info, info
    # `info` takes the remote flags as `run` does: the store's options without the environment, and the index
    # cache that the runs above filled (then opening is a HEAD, not the video's first bytes and its moov).
    bare = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    with ByteCounter(int(s3["endpoint_url"].rsplit(":", 1)[1])) as counter:
        relayed = dict(s3, endpoint_url=f"http://127.0.0.1:{counter.port}")
        flags = [f"--storage-option={name}={value}" for name, value in relayed.items()]
        for cached in ([], ["--index-cache", str(cache)]):
            before = counter.sent
            info = subprocess.run([str(binary), "info", "s3://videos/clip.mp4", *flags, *cached], check=True,
                                  capture_output=True, text=True, env=bare).stdout
            assert '"h264"' in info, info
        cold, warm = before, counter.sent - before
    assert warm < cold / 4, (cold, warm)
    refused = subprocess.run([str(binary), "info", "s3://videos/clip.mp4", "--storage-option", "bogus=1"],
                             capture_output=True, text=True, env=bare)
    assert refused.returncode != 0 and "bogus" in refused.stderr, refused.stderr


AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def test_gcs_objects_through_the_xml_api(video, tmp_path) -> None:
    """``gs://`` through framefeed's GCS client, against the S3-compatible XML API that Cloud Storage serves
    (``rclone serve s3`` without keys standing in for it: no GCS emulator installs from the registries this
    suite uses). The client is pointed at it as object_store's own tests point it at an emulator: a service
    account file with ``gcs_base_url`` and ``disable_oauth``; ``allow_http`` (an HTTP client option, given in
    ``storage_options``) lets it speak plain HTTP. Listing, reads, and frames equal to the file's."""
    with serve_s3(video.parent.parent, anonymous=True) as server:
        account = tmp_path / "service-account.json"
        account.write_text(json.dumps({"gcs_base_url": server["endpoint_url"], "disable_oauth": True,
                                       "client_email": "", "private_key": "", "private_key_id": ""}))
        options = {"google_service_account": str(account), "allow_http": "true"}
        assert ff.list_remote("gs://set/sub/", storage_options=options) == ["gs://set/sub/b.mp4"]
        reader = ff.VideoReader("gs://videos/clip.mp4", storage_options=options)
        assert len(reader) == 600
        assert np.array_equal(reader.get_frames_at(INDICES).data, local(video))
        # Without `allow_http` the client refuses the plain-HTTP endpoint: the video fails, named.
        with pytest.raises(ff.VideoError) as refused:
            ff.VideoReader("gs://videos/clip.mp4", storage_options={"google_service_account": str(account)})
        assert refused.value.code == "source_unavailable"
        assert "gs://videos/clip.mp4" in str(refused.value)


def test_azure_blobs_through_azurite(video, tmp_path, monkeypatch) -> None:
    """``az://`` against Azurite (Microsoft's emulator, from the npm registry: ``npm install azurite``), when
    ``azurite-blob`` is on PATH or named by ``FRAMEFEED_AZURITE``; the blob is uploaded with azure-storage-blob
    (the test extra). CI installs Azurite and requires this test; elsewhere it skips without it, saying so."""
    azurite = os.environ.get("FRAMEFEED_AZURITE") or shutil.which("azurite-blob")
    if azurite is None:
        missing("azurite", "azurite-blob is not installed (npm install azurite; FRAMEFEED_AZURITE=its path)")
    blob = require_module("azure.storage.blob", "the Azure test")
    port = _free_port()
    process = subprocess.Popen(
        [azurite, "--blobHost", "127.0.0.1", "--blobPort", str(port), "--location", str(tmp_path), "--silent",
         "--skipApiVersionCheck"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(port, process, "azurite")
        endpoint = f"http://127.0.0.1:{port}/devstoreaccount1"
        service = blob.BlobServiceClient.from_connection_string(
            f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={AZURITE_KEY};"
            f"BlobEndpoint={endpoint};"
        )
        with open(video, "rb") as f:
            service.create_container("videos").upload_blob("clip.mp4", f)
        # The emulator's address, as object_store finds it.
        monkeypatch.setenv("AZURITE_BLOB_STORAGE_URL", f"http://127.0.0.1:{port}")
        options = {"account_name": "devstoreaccount1", "account_key": AZURITE_KEY, "azure_storage_use_emulator": True}
        reader = ff.VideoReader("az://videos/clip.mp4", storage_options=options)
        assert np.array_equal(reader.get_frames_at(INDICES).data, local(video))
    finally:
        process.terminate()
        process.wait()
