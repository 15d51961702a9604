#!/usr/bin/env bash
# Runs one fuzz target for SECONDS (default 60) over its committed seeds and a working corpus, with
# AddressSanitizer and LeakSanitizer (cargo fuzz's default), on the machine's stable toolchain
# (RUSTC_BOOTSTRAP=1 lets it take the sanitizer flags). Crashes land in fuzz/artifacts/TARGET/.
#   bash fuzz/run.sh operator_whole 3600
set -euo pipefail
cd "$(dirname "$0")"
target=${1:?usage: run.sh TARGET [SECONDS] [extra libFuzzer options]}
seconds=${2:-60}
shift $(( $# < 2 ? $# : 2 ))
mkdir -p "corpus/$target"
# Inputs up to 64 KiB: the fixtures are 2-30 KB; frames capped at 1024x1024 and MP4 indexes at 65536 samples by
# the targets, so that no input needs more than about 300 MB. Any single allocation over 256 MB, or a process
# over 1 GB (ASan's quarantine kept small), is a finding: an input that makes FFmpeg take memory out of
# proportion to it (the claims in tests/container_claims.rs took 1-2.2 GB under the old 3 GB limit, unseen).
export ASAN_OPTIONS="${ASAN_OPTIONS:-quarantine_size_mb=16:malloc_context_size=10}"
RUSTC_BOOTSTRAP=1 cargo fuzz run -O "$target" "corpus/$target" "seeds/$target" -- \
  -max_total_time="$seconds" -max_len=65536 -timeout=30 -rss_limit_mb=1024 -malloc_limit_mb=256 \
  -print_final_stats=1 "$@"
