"""framefeed against the decode floor and ffmpeg's own RGB conversion (issue 14, targets 1-3).

For each case, in one interleaved loop of RUNS rounds (the order rotates each round): the decode-only floor
(`ffmpeg -threads 2 -i X -f null -`), ffmpeg's conversion to RGB (`... -pix_fmt rgb24 -f null -`), and the
release CLI (`framefeed run X --threads 2 ARGS`), plus, when BEFORE names another framefeed binary, that one
too, and when VARIANT holds extra CLI arguments (e.g. `--huge-pages`), this CLI with them as a contender of its
own. Prints wall-time medians, the ratios to the floor and to ffmpeg rgb24, and the CLI's median system time
and peak RSS, as a Markdown table.

Usage: cargo build --release --features cli && bash benches/clips.sh &&
       [BEFORE=path/to/old/framefeed] [VARIANT="--huge-pages"] python3 benches/floor.py [RUNS=5] [CASE-SUBSTRING]
       [--json PATH]

`--json PATH` also writes the medians there, with the command, the date and the machine
(benches/results/full_decode.json, and full_decode_huge_pages.json with VARIANT="--huge-pages", are what
benches/plot.py draws).

(Peak RSS counts ordinary pages only: reserved huge pages are not part of a process's RSS.)
"""

import datetime
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target/release/framefeed")
CLIPS = os.path.join(ROOT, "target/bench-clips")
BEFORE = os.environ.get("BEFORE")
VARIANT = os.environ.get("VARIANT", "").split()

RESIZE_CROP = ["--resize-shorter", "256", "--crop", "224x224", "--seed", "1", "--dtype", "f32", "--layout",
               "cfhw"]
CASES = [
    ("1080p H.264, -L 8 -B 4", "1080p.mp4", ["-L", "8", "-B", "4"]),
    ("1080p VP9, -L 8 -B 4", "1080p_vp9.webm", ["-L", "8", "-B", "4"]),
    ("4K H.264, -L 8 -B 4", "4k.mp4", ["-L", "8", "-B", "4"]),
    ("4K H.264, -L 16 -B 4", "4k.mp4", ["-L", "16", "-B", "4"]),
    ("1080p H.264, resize 256 + crop 224, f32 CFHW", "1080p.mp4", ["-L", "8", "-B", "4"] + RESIZE_CROP),
    ("1080p H.264, resize to 1280x720 (whole frame)", "1080p.mp4", ["-L", "8", "-B", "4", "--resize", "1280x720"]),
    ("1080p H.264, crop 224 only", "1080p.mp4", ["-L", "8", "-B", "4", "--crop", "224x224", "--seed", "1"]),
]


def timed(cmd: list[str]) -> tuple[float, float, float]:
    """(wall seconds, system seconds, peak RSS MiB) of `cmd`, measured by a wrapper process of its own, so that
    the RSS is this command's alone."""
    out = subprocess.run(
        [sys.executable, "-c",
         "import resource,subprocess,sys,time;s=time.monotonic();"
         "subprocess.run(sys.argv[1:],check=True,stdout=subprocess.DEVNULL);w=time.monotonic()-s;"
         "u=resource.getrusage(resource.RUSAGE_CHILDREN);print(w,u.ru_stime,u.ru_maxrss/1024)",
         *cmd],
        check=True, capture_output=True, text=True,
    ).stdout.split()
    return float(out[0]), float(out[1]), float(out[2])


def run_cli(binary: str, path: str, args: list[str]) -> tuple[float, float, float]:
    return timed([binary, "run", path, "--threads", "2", *args])


def machine() -> str:
    """This machine in a few words: cores, architecture, OS, the ffmpeg CLI's release."""
    system = platform.system()
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    system = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    try:
        ffmpeg = subprocess.run(["ffmpeg", "-version"], capture_output=True, text=True).stdout.split()[2]
    except (OSError, IndexError):
        ffmpeg = "unknown"
    return f"{os.cpu_count()}-core {platform.machine()}, {system}, FFmpeg {ffmpeg}"


def main() -> None:
    json_path = None
    if "--json" in sys.argv:
        at = sys.argv.index("--json")
        json_path = sys.argv[at + 1]
        del sys.argv[at:at + 2]
    rows = []
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    print("| case | floor (s) | ffmpeg rgb24 (s) | framefeed (s) | / floor | / ffmpeg rgb24 | sys (s) | peak RSS (MiB) |"
          + (" before (s) | before / floor | before sys (s) | before RSS (MiB) |" if BEFORE else "")
          + (f" `{' '.join(VARIANT)}` (s) | / floor | / ffmpeg rgb24 | sys (s) | peak RSS (MiB) |" if VARIANT else ""))
    print("|---" * (8 + (4 if BEFORE else 0) + (5 if VARIANT else 0)) + "|")
    for name, clip, args in CASES:
        if only not in name:
            continue
        path = os.path.join(CLIPS, clip)
        runners = {
            "floor": lambda: timed(["ffmpeg", "-v", "error", "-threads", "2", "-i", path, "-f", "null", "-"]),
            "rgb": lambda: timed(["ffmpeg", "-v", "error", "-threads", "2", "-i", path, "-pix_fmt", "rgb24",
                                  "-f", "null", "-"]),
            "ff": lambda: run_cli(BIN, path, args),
        }
        if BEFORE:
            runners["before"] = lambda: run_cli(BEFORE, path, args)
        if VARIANT:
            runners["variant"] = lambda: run_cli(BIN, path, args + VARIANT)
        results: dict[str, list[tuple[float, float, float]]] = {k: [] for k in runners}
        keys = list(runners)
        for r in range(runs):
            for k in keys[r % len(keys):] + keys[:r % len(keys)]:
                results[k].append(runners[k]())

        def med(k: str, i: int = 0) -> float:
            return statistics.median(x[i] for x in results[k])

        row = (f"| {name} | {med('floor'):.3f} | {med('rgb'):.3f} | {med('ff'):.3f} | "
               f"**{med('ff') / med('floor'):.2f}** | {med('ff') / med('rgb'):.2f} | {med('ff', 1):.2f} | "
               f"{med('ff', 2):.0f} |")
        if BEFORE:
            row += (f" {med('before'):.3f} | {med('before') / med('floor'):.2f} | {med('before', 1):.2f} | "
                    f"{med('before', 2):.0f} |")
        if VARIANT:
            row += (f" {med('variant'):.3f} | **{med('variant') / med('floor'):.2f}** | "
                    f"**{med('variant') / med('rgb'):.2f}** | {med('variant', 1):.2f} | {med('variant', 2):.0f} |")
        print(row, flush=True)
        record = {"case": name, "floor_s": round(med("floor"), 3), "rgb24_s": round(med("rgb"), 3),
                  "framefeed_s": round(med("ff"), 3), "sys_s": round(med("ff", 1), 2),
                  "peak_rss_mib": round(med("ff", 2))}
        if BEFORE:
            record.update(before_s=round(med("before"), 3), before_sys_s=round(med("before", 1), 2),
                          before_peak_rss_mib=round(med("before", 2)))
        if VARIANT:
            record.update(variant_s=round(med("variant"), 3), variant_sys_s=round(med("variant", 1), 2),
                          variant_peak_rss_mib=round(med("variant", 2)))
        rows.append(record)
    if json_path:
        env = " ".join(f"{k}=\"{v}\"" for k, v in (("BEFORE", BEFORE), ("VARIANT", " ".join(VARIANT))) if v)
        command = f"{env + ' ' if env else ''}python3 benches/floor.py {shlex.join(sys.argv[1:]) or runs}"
        data = {"benchmark": "full_decode",
                "title": "framefeed run against the decode floor (ffmpeg -f null) and ffmpeg's RGB conversion",
                "command": command, "date": datetime.date.today().isoformat(), "machine": machine(),
                "unit": f"wall seconds, median of {runs} interleaved rounds; sys_s and peak_rss_mib are the "
                        "framefeed process's", "variant": VARIANT, "rows": rows}
        with open(json_path, "w") as f:
            f.write(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    main()
