"""Issue 64 on the card: the self-contained wheel's NVDEC path against its CPU path on the same files, through
both doors (`VideoInput` and `VideoReader`), with the settings whose GPU code runs in the kernel.

For each case the same decode runs twice, `device="cpu"` and `device=DEVICE` (default `cuda`), and the results
are compared by the documented rule (the Rust GPU tests' `assert_matches_cpu`): the same batch structure, the
same timestamps and frame indices, and pixels within 1.5 8-bit levels on average (uint16 divided by 257) over the
frames neither side marks damaged; damage must be seen on both sides or neither (the marks themselves are
listed: each decoder conceals its own way, and the CPU's frame threads make its marks err on the safe side by a
frame or two, run to run). A GPU decode that fell back to the CPU (`decoded_on != "cuda"`) is reported as such
and does not count as an NVDEC pass. Prints one Markdown table per part, then `FAILED` rows; exits 1 if any row failed.

    python3 benches/gpu_wheel.py VIDEOS_DIR [--device cuda|cpu] [--clip CLIP.mp4]

Parts:
- the corpus (VIDEOS_DIR with its MANIFEST.json, plus its `rotated/`), the tree's fixtures for rotation and
  resolution changes, and its damage fixtures with bytes overwritten, through `VideoInput`;
- clip sampling (regular clips, strided) through `VideoInput`;
- 16-bit output and HDR tone mapping (P016 surfaces on NVDEC) on the tree's 10/12-bit fixtures;
- the random-access reader, `VideoReader(device=...)`: scattered indices, a strided range and times;
- with `--clip` (a long 1080p clip): the reader's random access timed on each device, and TorchCodec's CUDA
  decoder on the same indices where it imports;
- DALI's `fn.experimental.inputs.video`, where `nvidia.dali` imports (else the reason is printed).

`--device cpu` runs every comparison CPU against CPU: a check of this script where no GPU is (every row must
read 0.000).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

import framefeed as ff

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
TOLERANCE = 1.5  # mean absolute difference, 8-bit levels
FAILED: List[str] = []
FELL_BACK: List[str] = []


class _OnHost:
    """A DLPack producer whose export is a host copy of `obj` (frames in GPU memory, for NumPy)."""

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __dlpack__(self, **kw: Any) -> Any:
        kept = {k: v for k, v in kw.items() if k in ("stream", "max_version")}
        return self.obj.__dlpack__(dl_device=(1, 0), copy=True, **kept)

    def __dlpack_device__(self) -> Tuple[int, int]:
        return (1, 0)


def on_host(obj: Any) -> np.ndarray:
    if obj.__dlpack_device__()[0] == 1:
        return np.from_dlpack(obj)
    return np.from_dlpack(_OnHost(obj))


def levels(a: np.ndarray) -> np.ndarray:
    if a.dtype == np.uint16:
        return a.astype(np.float64) / 257.0
    if a.dtype in (np.float32, np.float64):
        return a.astype(np.float64) * 255.0
    return a.astype(np.float64)


def diff(a: np.ndarray, b: np.ndarray) -> Tuple[float, float]:
    if a.shape != b.shape:
        return float("inf"), float("inf")
    if a.size == 0:
        return 0.0, 0.0
    d = np.abs(levels(a) - levels(b))
    return float(d.mean()), float(d.max())


def decode(data: bytes, device: str, **settings: Any) -> Dict[str, Any]:
    """Every sequence of one video through `VideoInput`: structure, timestamps, damage, pixels (on the host)."""
    inp = ff.VideoInput(8, 2, device=device, cpu_fallback=True, **settings)
    inp.feed(data, "clip")
    inp.close()
    out: Dict[str, Any] = {"structure": [], "frames": [], "decoded_on": set(), "error": None}
    start = time.perf_counter()
    while True:
        try:
            batch = inp.next_batch()
        except ff.VideoError as e:
            out["error"] = e.code
            continue
        if batch is None:
            break
        out["decoded_on"].add(batch.decoded_on)
        host = batch.to_host()
        for seq in host.sequences:
            out["structure"].append((batch.index, seq.valid_frames, seq.padded_frames, tuple(seq.indices),
                                     tuple(seq.pts), seq.shape))
            pixels = seq.numpy()
            out["frames"] += [(flag, pixels[f].copy()) for f, flag in enumerate(seq.damaged)]
    out["seconds"] = time.perf_counter() - start
    return out


def compare(part: str, name: str, cpu: Dict[str, Any], gpu: Dict[str, Any], device: str) -> str:
    """One table row; a failure is remembered."""
    problems = []
    if cpu["structure"] != gpu["structure"]:
        problems.append("structure/timestamps differ")
    flagged = [sum(flag for flag, _ in d["frames"]) for d in (cpu, gpu)]
    if (flagged[0] > 0) != (flagged[1] > 0):
        problems.append(f"damage seen on one side only ({flagged[0]} frames flagged on the CPU, {flagged[1]} "
                        f"on {device})")
    if cpu["error"] != gpu["error"]:
        problems.append(f"errors differ ({cpu['error']} / {gpu['error']})")
    # The documented rule: frames neither side marks damaged are the same picture (within the tolerance);
    # damaged ones may differ (each decoder conceals its own way), and with frame threading the CPU's marks
    # err on the safe side by a frame or two, so the sets of marks are reported, not required equal.
    total, size, peak = 0.0, 0, 0.0
    for (fa, a), (fb, b) in zip(cpu["frames"], gpu["frames"]):
        if fa or fb:
            continue
        if a.shape != b.shape:
            problems.append("frame shapes differ")
            break
        d = np.abs(levels(a) - levels(b))
        total, size, peak = total + float(d.sum()), size + d.size, max(peak, float(d.max(initial=0.0)))
    mean = total / size if size else 0.0
    if mean > TOLERANCE:
        problems.append(f"pixels differ by {mean:.3f} levels")
    on = ",".join(sorted(gpu["decoded_on"])) or "-"
    verdict = "ok" if not problems else "; ".join(problems)
    if problems:
        FAILED.append(f"{part}: {name}: {verdict}")
    elif device != "cpu" and gpu["decoded_on"] and gpu["decoded_on"] != {"cuda"}:
        # A codec or size NVDEC does not take: the documented fallback, listed apart (not an NVDEC pass).
        verdict = f"fell back ({on})"
        FELL_BACK.append(f"{part}: {name}")
    frames = sum(s[1] for s in cpu["structure"])
    return (f"| {name} | {frames} | {on} | {mean:.3f} | {peak:.0f} | {flagged[0]} / {flagged[1]} | "
            f"{cpu['error'] or '-'} | "
            f"{cpu['seconds']:.3f} / {gpu['seconds']:.3f} | {verdict} |")


HEADER = ("| video | frames | decoded on | mean diff of undamaged frames (levels) | max diff | "
          "damaged, CPU / device | error | s, CPU / device | verdict |\n|---|---|---|---|---|---|---|---|---|")


def corpus(videos: Path) -> List[Path]:
    manifest = json.loads((videos / "MANIFEST.json").read_text())
    files = [videos / entry["file"] for entry in manifest if entry.get("video_streams")]
    files += sorted((videos / "rotated").glob("*")) if (videos / "rotated").is_dir() else []
    fixtures = sorted(FIXTURES.glob("rotated_*")) + sorted(FIXTURES.glob("res_change.*"))
    # The 9000-frame clip takes minutes on either device and adds nothing the others do not check.
    return [f for f in files + fixtures if f.exists() and "long_" not in f.name]


def damaged(path: Path) -> bytes:
    """A damage fixture with 600 bytes overwritten at 45% of the file (seeded: the same bytes on each device)."""
    data = bytearray(path.read_bytes())
    start = int(len(data) * 0.45)
    data[start:start + 600] = random.Random(path.name).randbytes(600)
    return bytes(data)


def part(title: str, device: str, cases: List[Tuple[str, bytes, Dict[str, Any]]]) -> None:
    print(f"\n### {title}\n")
    print(HEADER, flush=True)
    for name, data, settings in cases:
        try:
            cpu = decode(data, "cpu", **settings)
            gpu = decode(data, device, **settings)
            print(compare(title, name, cpu, gpu, device), flush=True)
        except Exception as e:  # a setting the device refuses: a failed row, the others go on
            FAILED.append(f"{title}: {name}: {type(e).__name__}: {e}")
            print(f"| {name} | | | | | | | | {type(e).__name__}: {e} |", flush=True)


def reader_part(device: str, files: List[Path]) -> None:
    print("\n### VideoReader: scattered indices, a strided range, times\n")
    print("| video | frames read | mean diff (levels) | max diff | device | verdict |\n|---|---|---|---|---|---|")
    for path in files:
        try:
            cpu, gpu = ff.VideoReader(str(path)), ff.VideoReader(str(path), device=device)
        except Exception as e:
            FAILED.append(f"VideoReader: {path.name}: {type(e).__name__}: {e}")
            print(f"| {path.name} | | | | | {type(e).__name__}: {e} |", flush=True)
            continue
        n = len(cpu)
        rng = random.Random(n)
        picks = sorted(rng.sample(range(n), min(n, 12)), reverse=True)
        reads = [
            ("at", lambda r: r.get_frames_at(picks)),
            ("range", lambda r: r.get_frames_in_range(0, n, max(1, n // 10))),
            ("played_at", lambda r: r.get_frames_played_at([0.0, r.metadata.duration_seconds / 2])),
        ]
        worst, peak, count, problems = 0.0, 0.0, 0, []
        for what, read in reads:
            outcome = []
            for reader in (cpu, gpu):
                try:
                    outcome.append(read(reader))
                except ff.VideoError as e:  # a read of a hole: the same error on both devices is agreement
                    outcome.append(e.code)
            a, b = outcome
            if isinstance(a, str) or isinstance(b, str):
                if a != b:
                    problems.append(f"{what}: {a if isinstance(a, str) else 'frames'} on the CPU, "
                                    f"{b if isinstance(b, str) else 'frames'} on {device}")
                continue
            if (a.indices, a.pts_seconds, a.damaged) != (b.indices, b.pts_seconds, b.damaged):
                problems.append(f"{what}: indices/times/damage differ")
            m, p = diff(on_host(a), on_host(b))
            worst, peak, count = max(worst, m), max(peak, p), count + len(a)
        if worst > TOLERANCE:
            problems.append(f"pixels differ by {worst:.3f} levels")
        verdict = "ok" if not problems else "; ".join(problems)
        if problems:
            FAILED.append(f"VideoReader: {path.name}: {verdict}")
        elif device != "cpu" and gpu.device == "cpu":
            verdict = "fell back (cpu)"
            FELL_BACK.append(f"VideoReader: {path.name}")
        print(f"| {path.name} | {count} | {worst:.3f} | {peak:.0f} | {gpu.device} | {verdict} |", flush=True)


def random_access(device: str, clip: Path) -> None:
    """The reader's random access on a long clip, per device, and TorchCodec's CUDA decoder where it imports."""
    print(f"\n### Random access on {clip.name}: 40 scattered frames, median of 3\n")
    probe = ff.VideoReader(str(clip))
    n = len(probe)
    picks = random.Random(7).sample(range(n), min(n, 40))
    rows = []

    def timed(read: Any) -> Tuple[float, Any]:
        times, out = [], None
        for _ in range(3):
            start = time.perf_counter()
            out = read()
            times.append(time.perf_counter() - start)
        return sorted(times)[1], out

    reference: Optional[np.ndarray] = None
    for dev in ["cpu"] + ([device] if device != "cpu" else []):
        try:
            reader = ff.VideoReader(str(clip), device=dev, cpu_fallback=False)
        except Exception as e:
            FAILED.append(f"random access: VideoReader({dev}): {type(e).__name__}: {e}")
            continue
        t, frames = timed(lambda: reader.get_frames_at(picks))
        data = on_host(frames)
        reference = data if reference is None else reference
        rows.append((f"framefeed VideoReader({dev})", t, diff(reference, data)[0]))
    try:
        import torch
        from torchcodec.decoders import VideoDecoder

        if device != "cpu" and torch.cuda.is_available():
            decoder = VideoDecoder(str(clip), device="cuda")
            t, batch = timed(lambda: (decoder.get_frames_at(picks), torch.cuda.synchronize())[0])
            data = batch.data.permute(0, 2, 3, 1).cpu().numpy()
            rows.append(("TorchCodec VideoDecoder(cuda)", t, diff(reference, data)[0]))
        else:
            print("TorchCodec: no CUDA device for it here")
    except Exception as e:  # not installed, or no CUDA build: said, not failed
        print(f"TorchCodec's CUDA decoder: not measured ({type(e).__name__}: {e})")
    print("| decoder | s | frames/s | mean diff vs framefeed CPU (levels) |\n|---|---|---|---|")
    for name, t, d in rows:
        print(f"| {name} | {t:.3f} | {len(picks) / t:.1f} | {d:.3f} |")


def dali_part() -> None:
    try:
        import nvidia.dali  # noqa: F401
    except Exception as e:
        print(f"\nDALI's fn.experimental.inputs.video: not run ({type(e).__name__}: {e}; the device machine "
              "reaches no package registry)")
        return
    print("\nDALI imports here: run benches/gpu_operators.rs' clips through it by hand (not scripted: no DALI "
          "has been reachable to write it against)")


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("videos", type=Path)
    args.add_argument("--device", default="cuda")
    args.add_argument("--clip", type=Path, default=None)
    opts = args.parse_args()
    device = opts.device
    ok, why = ff.cuda_status()
    print(f"framefeed {getattr(ff, '__version__', '?')}, FFmpeg {ff.ffmpeg_build()['version']}; "
          f"cuda_status: {ok} ({why}); comparing cpu with {device}")
    if device != "cpu" and not ok:
        print(f"no usable GPU: {why}", file=sys.stderr)
        sys.exit(2)
    files = corpus(opts.videos)
    part("The corpus, rotation, resolution changes and damage (VideoInput)", device,
         [(f.name, f.read_bytes(), {}) for f in files]
         + [(f"{f.name}, 600 bytes overwritten", damaged(f), {}) for f in sorted(FIXTURES.glob("damage_*"))])
    sampled = [f for f in files if f.name.startswith(("testsrc2", "nasa", "dog", "cfr"))]
    sampled += sorted(FIXTURES.glob("sampling_*"))
    part("Clip sampling: 3 regular clips of 8, stride 2 (VideoInput)", device,
         [(f.name, f.read_bytes(), dict(clips=3, clip_sampler="regular", stride=2, seed=5)) for f in sampled])
    deep = sorted(FIXTURES.glob("hdr_*")) + sorted(FIXTURES.glob("tonemap_*")) + [FIXTURES / "hevc_10bit.mp4"]
    part("16-bit output and tone mapping (P016 surfaces on NVDEC)", device,
         [(f"{f.name}, {s}", f.read_bytes(), settings) for f in deep
          for s, settings in (("uint16", dict(dtype="uint16")),
                              ("tonemap reinhard, float32_unit", dict(dtype="float32_unit", tonemap="reinhard")),
                              ("tonemap hable, uint8", dict(tonemap="hable")))])
    reader_part(device, [f for f in files if "damage" not in f.name and "res_change" not in f.name])
    if opts.clip:
        random_access(device, opts.clip)
    dali_part()
    print()
    if FELL_BACK:
        print(f"decoded on the CPU, NVDEC not taking them (the documented fallback; {len(FELL_BACK)}):")
        for line in FELL_BACK:
            print(f"  {line}")
    if FAILED:
        print(f"FAILED ({len(FAILED)}):")
        for line in FAILED:
            print(f"  {line}")
        sys.exit(1)
    print(f"every row agrees ({device} against cpu)")


if __name__ == "__main__":
    main()
