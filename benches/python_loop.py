#!/usr/bin/env python3
"""Issue 53's Python loop against the CLI: the same job, each in a process of its own, timed from the process's
start to its exit by this script (so `import framefeed` and the interpreter's start count, as the CLI's own
start does).

  cli     `framefeed run -L 8 -B 2 --threads 2 CLIP` (release build)
  python  `python -c`: `import framefeed`, read the file, `VideoInput(8, 2, decoder_threads=2).feed(bytes)`,
          close, every batch's sequences as NumPy arrays (`numpy()`, views)

`python, NumPy imported first` is the same loop importing NumPy before framefeed, as `import framefeed` did before
issue 53 (NumPy is now imported at the first array); `python, OPENBLAS_NUM_THREADS=1` the same loop with NumPy's
OpenBLAS starting one thread instead of one a core (its threads spin a while after they start). Also printed, to say where a gap comes from: `python -c pass` (the interpreter alone), `import numpy` and
`import framefeed` alone, and the loop's own time as the child measures it (from before `VideoInput` to its last
batch). Rounds are interleaved, the order alternating each round; medians.

    cargo build --release --features cli && pip install ./python
    python3 benches/python_loop.py [ROUNDS=7] [CLIP=target/bench-clips/1080p.mp4]

Quick (about 2 s a round on the 300-frame 1080p clip), but a timing: CI does not run it.
"""

from __future__ import annotations

import pathlib
import resource
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]

LOOP = """
import time
start = time.perf_counter()
{before}import framefeed as ff
imported = time.perf_counter()
data = open({clip!r}, "rb").read()
begin = time.perf_counter()
inp = ff.VideoInput(8, 2, decoder_threads=2)
inp.feed(data)
inp.close()
frames = 0
for batch in inp:
    for seq in batch.sequences:
        frames += len(seq.numpy()[: seq.valid_frames])
end = time.perf_counter()
print(frames, imported - start, end - begin)
"""


def timed(command: list) -> tuple:
    """(wall seconds of the whole process, its CPU seconds (user + system), its stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = process.communicate()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if process.returncode != 0:
        raise RuntimeError(f"{command[:3]} failed:\n{err[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    clip = sys.argv[2] if len(sys.argv) > 2 else str(ROOT / "target/bench-clips/1080p.mp4")
    binary = str(ROOT / "target/release/framefeed")
    python = sys.executable
    contenders = {
        "cli": [binary, "run", "-L", "8", "-B", "2", "--threads", "2", clip],
        "python": [python, "-c", LOOP.format(clip=clip, before="")],
        "python, NumPy imported first": [python, "-c", LOOP.format(clip=clip, before="import numpy\n")],
        "python, OPENBLAS_NUM_THREADS=1": ["env", "OPENBLAS_NUM_THREADS=1", python, "-c",
                                           LOOP.format(clip=clip, before="")],
        "python -c pass": [python, "-c", "pass"],
        "import numpy": [python, "-c", "import numpy"],
        "import framefeed": [python, "-c", "import framefeed"],
    }
    walls: dict = {name: [] for name in contenders}
    cpus: dict = {name: [] for name in contenders}
    loops, imports, ratios = [], [], []
    for r in range(rounds):
        order = list(contenders) if r % 2 == 0 else list(reversed(contenders))
        this = {}
        for name in order:
            wall, cpu, out = timed(contenders[name])
            walls[name].append(wall)
            cpus[name].append(cpu)
            this[name] = wall
            if name == "python":
                frames, imported, loop = out.split()
                loops.append(float(loop))
                imports.append(float(imported))
            if name == "cli":
                cli_frames = int(next(line.split()[-1] for line in out.splitlines() if line.startswith("frames:")))
        if int(frames) != cli_frames:
            raise RuntimeError(f"python read {frames} frames, the CLI {cli_frames}")
        ratios.append(this["python"] / this["cli"])
        print(f"round {r + 1}: cli {this['cli']:.3f} s, python {this['python']:.3f} s, "
              f"ratio {ratios[-1]:.3f}", file=sys.stderr)
    print(f"\n{pathlib.Path(clip).name}, {cli_frames} frames, -L 8 -B 2 --threads 2, {rounds} rounds, medians\n")
    print("| process | wall s (median) | vs the CLI | CPU s (user + system, median) |")
    print("|---|---:|---:|---:|")
    cli = statistics.median(walls["cli"])
    for name, values in walls.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.3f} | {median / cli:.3f}x | {statistics.median(cpus[name]):.3f} |")
    print(f"\nratio python / cli per round: {' '.join(f'{x:.3f}' for x in ratios)}; "
          f"median {statistics.median(ratios):.3f}")
    print(f"in the python process: `import framefeed` {statistics.median(imports):.3f} s, "
          f"the loop {statistics.median(loops):.3f} s")


if __name__ == "__main__":
    main()
