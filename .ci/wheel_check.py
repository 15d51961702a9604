"""The installed wheel against the ffmpeg CLI, frame by frame (used by .ci/debian13.sh and .ci/aarch64.sh).

`wheel_check.py reference OUT.json DIR NAME...` runs where the reference `ffmpeg` is (Debian 12): each video's
frames as rgb24 MD5s, in display order, each at its own size. `wheel_check.py check OUT.json DIR NAME...` runs where
only the wheel is (a clean Debian 13): framefeed decodes the same videos, with the operator (`VideoInput`) and the
reader (`VideoReader`), and every frame's MD5 must equal the reference's. The built-in sample is named `sample`:
the reference reads the repository's `assets/sample.mp4`, the check `framefeed.SAMPLE_MP4`, and the two must be
the same bytes.

A video with audio also has its sound checked: the reference keeps the CLI's `-ac 1 -ar 8000 -f f32le` samples
(base64), the check `framefeed.decode_audio(..., sample_rate=8000, channels=1)`, equal within 1e-4 (the wheel's
libswresample and decoders, with another architecture's vector code on Arm).

`check --no-gpu ...` also asks for `device="cuda"` on a machine without one, which must fail with framefeed's
`DeviceError` (not a crash). Each video's line gives the seconds its `VideoInput` pass took, and the last line
their sum (`decode seconds: S`), which benches compare between wheels.
"""

import base64
import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

SAMPLE = Path(__file__).resolve().parent.parent / "assets" / "sample.mp4"


def reference(video: str, folder: Path) -> dict:
    path = str(SAMPLE) if video == "sample" else str(folder / video)
    data = Path(path).read_bytes()
    out = subprocess.run(
        ["ffmpeg", "-v", "error", "-threads", "2", "-i", path, "-noautoscale", "-fps_mode", "passthrough",
         "-an", "-sn", "-dn", "-f", "framemd5", "-pix_fmt", "rgb24", "-"],
        check=True, capture_output=True, text=True,
    ).stdout
    md5s = [line.split(",")[-1].strip() for line in out.splitlines() if line and not line.startswith("#")]
    sound = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", path, "-vn", "-ac", "1", "-ar", "8000", "-f", "f32le", "-"],
        capture_output=True,
    )
    audio = base64.b64encode(sound.stdout).decode() if sound.returncode == 0 and sound.stdout else None
    return {"bytes_md5": hashlib.md5(data).hexdigest(), "frames": md5s, "audio": audio}


def check(video: str, folder: Path, expected: dict) -> tuple:
    import numpy as np

    import framefeed as ff

    data = ff.SAMPLE_MP4 if video == "sample" else (folder / video).read_bytes()
    problems = []
    if hashlib.md5(data).hexdigest() != expected["bytes_md5"]:
        problems.append(f"{video}: not the bytes the reference decoded")
    want = expected["frames"]

    started = time.perf_counter()
    inp = ff.VideoInput(sequence_length=8, batch_size=2)
    inp.feed(data, label=video)
    inp.close()
    streamed = []
    for batch in inp:
        for seq in batch.sequences:
            frames = seq.numpy()[: seq.valid_frames]
            streamed += [hashlib.md5(np.ascontiguousarray(f).tobytes()).hexdigest() for f in frames]
    seconds = time.perf_counter() - started
    if streamed != want:
        problems.append(f"{video}: VideoInput gave {len(streamed)} frames, {sum(a != b for a, b in zip(streamed, want))}"
                        f" differing, against ffmpeg's {len(want)}")

    reader = ff.VideoReader(data)
    read = [hashlib.md5(np.ascontiguousarray(f).tobytes()).hexdigest()
            for f in np.asarray(reader.get_frames_in_range(0, len(reader)).data)]
    if read != want:
        problems.append(f"{video}: VideoReader gave {len(read)} frames, {sum(a != b for a, b in zip(read, want))}"
                        f" differing, against ffmpeg's {len(want)}")
    if expected.get("audio"):
        theirs = np.frombuffer(base64.b64decode(expected["audio"]), dtype="<f4")
        ours = ff.decode_audio(data, sample_rate=8000, channels=1).data[0]
        if ours.shape != theirs.shape:
            problems.append(f"{video}: decode_audio gave {ours.shape[0]} samples against ffmpeg's {theirs.shape[0]}")
        elif np.abs(ours - theirs).max(initial=0.0) > 1e-4:
            problems.append(f"{video}: decode_audio's samples differ from ffmpeg's by {np.abs(ours - theirs).max()}")
        else:
            print(f"{video}: {ours.shape[0]} audio samples equal")
    print(f"{video}: {len(want)} frames, {'equal' if not problems else 'DIFFERENT'}, VideoInput {seconds:.2f} s")
    return problems, seconds


def no_gpu() -> list:
    """`device="cuda"` where there is no GPU: framefeed's DeviceError, saying why."""
    import framefeed as ff

    try:
        ff.VideoInput(sequence_length=1, batch_size=1, device="cuda")
    except ff.DeviceError as e:
        print(f"device='cuda' without a GPU: DeviceError: {e}")
        return []
    except Exception as e:  # noqa: BLE001 - any other failure is the finding
        return [f"device='cuda' without a GPU raised {type(e).__name__}, not DeviceError: {e}"]
    return ["device='cuda' without a GPU did not fail"]


def main() -> int:
    args = sys.argv[1:]
    gpu_absent = "--no-gpu" in args
    args = [a for a in args if a != "--no-gpu"]
    mode, out, folder, videos = args[0], Path(args[1]), Path(args[2]), args[3:]
    if mode == "reference":
        out.write_text(json.dumps({v: reference(v, folder) for v in videos}))
        return 0
    import framefeed as ff

    build = ff.ffmpeg_build()
    print(f"framefeed {ff.__version__} from {ff.__file__}, FFmpeg {build['version']} ({build['license']})")
    problems = []
    if not build["license"].startswith("LGPL") or "--enable-gpl" in build["configuration"]:
        problems.append(f"the wheel's FFmpeg is not LGPL: {build['license']}, {build['configuration']}")
    expected = json.loads(out.read_text())
    total = 0.0
    for video in videos:
        found, seconds = check(video, folder, expected[video])
        problems += found
        total += seconds
    if gpu_absent:
        problems += no_gpu()
    print(f"decode seconds: {total:.2f}")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
