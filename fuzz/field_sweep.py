#!/usr/bin/env python3
"""Header-field sweep: overwrites each 32-bit position of a file's first bytes with large values and runs
`framefeed run` on every mutant, reporting those whose peak RSS passes a limit (or that hang).

Coverage-guided fuzzing rarely builds a count that is both large and well placed; this sweep tries every
placement of a few large counts, so that a claim the demuxer acts on without bounds shows as memory.

    python3 fuzz/field_sweep.py target/release/framefeed clip.mp4 --bytes 1300 --limit-mib 150

Needs GNU time (`apt-get install time`). Runs two mutants at a time.
"""
import argparse
import concurrent.futures
import os
import struct
import subprocess
import tempfile

VALUES = [(0x7FFFFFFF, ">I"), (0x04000000, ">I"), (0xFFFFFFF0, ">I"), (0x04000000, "<I")]


def peak_kib(binary: str, data: bytes) -> int:
    """Peak RSS of `framefeed run` on `data` in KiB (-1: it ran past 60 s)."""
    fd, path = tempfile.mkstemp(suffix=".bin")
    os.write(fd, data)
    os.close(fd)
    try:
        run = subprocess.run(["/usr/bin/time", "-f", "%M", binary, "run", path],
                             capture_output=True, text=True, timeout=60)
        return int(run.stderr.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        return -1
    finally:
        os.unlink(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("file")
    parser.add_argument("--bytes", type=int, default=1300, help="positions swept from the start (default 1300)")
    parser.add_argument("--limit-mib", type=int, default=150, help="report mutants past this peak RSS")
    args = parser.parse_args()
    original = open(args.file, "rb").read()
    jobs = [(pos, value, fmt) for pos in range(min(args.bytes, len(original) - 4)) for value, fmt in VALUES]

    def run(job):
        pos, value, fmt = job
        data = bytearray(original)
        struct.pack_into(fmt, data, pos, value)
        return job, peak_kib(args.binary, bytes(data))

    found = 0
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        for (pos, value, fmt), kib in pool.map(run, jobs):
            if kib < 0 or kib > args.limit_mib * 1024:
                found += 1
                print(f"offset {pos} {fmt} {value:#x}: " + ("hang" if kib < 0 else f"{kib // 1024} MiB"), flush=True)
    print(f"{args.file}: {len(jobs)} mutants, {found} past {args.limit_mib} MiB or hanging")


if __name__ == "__main__":
    main()
