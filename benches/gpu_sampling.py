"""Clip sampling on NVDEC against the same clips on the CPU and the whole video on NVDEC (issue 36 item 2), on a
GPU machine from what benches/gpu-bundle.sh packed: `bash benches/gpu-run.sh sampling` (carry [".gpu",
".gpu-clips"]). Each job is `framefeed run` on one clip, 3 rounds interleaved, the median wall time printed with
the frames delivered; the GPU's jobs verify nothing here (tests/gpu_backend.rs does), they time it.

    python3 benches/gpu_sampling.py FRAMEFEED CLIP...
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time

ROUNDS = 3


def job(binary: str, clip: str, device: str, sampling: list[str]) -> list[str]:
    return [binary, "run", clip, "--device", device, "--json", "-L", "16", "-B", "4", *sampling]


def frames(stdout: str) -> int:
    """Frames delivered, from the JSON summary's sequences (their valid frames)."""
    total = 0
    for line in stdout.splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        for seq in record.get("sequences", []) if isinstance(record, dict) else []:
            total += seq.get("valid_frames", 0)
    return total


def main() -> None:
    binary, clips = sys.argv[1], sys.argv[2:]
    clip_args = ["--clips", "4", "--seed", "1"]
    print(f"{'clip':<22} {'job':<34} {'median s':>9} {'frames':>7}")
    for clip in clips:
        jobs = {
            "whole video, NVDEC": job(binary, clip, "cuda", []),
            "4 clips x 16, NVDEC (seeking)": job(binary, clip, "cuda", clip_args),
            "4 clips x 16, CPU (seeking)": job(binary, clip, "cpu", clip_args),
        }
        times: dict[str, list[float]] = {name: [] for name in jobs}
        delivered: dict[str, int] = {}
        for _ in range(ROUNDS):
            for name, argv in jobs.items():
                start = time.perf_counter()
                done = subprocess.run(argv, capture_output=True, text=True)
                times[name].append(time.perf_counter() - start)
                if done.returncode != 0:
                    print(f"FAILED {name}: {done.stderr[-400:]}")
                delivered[name] = frames(done.stdout)
        for name in jobs:
            print(f"{clip.split('/')[-1]:<22} {name:<34} {statistics.median(times[name]):>9.3f} {delivered[name]:>7}")


if __name__ == "__main__":
    main()
