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
# Inputs up to 64 KiB: the fixtures are 2-30 KB; frames capped at 1024x1024 by the targets.
RUSTC_BOOTSTRAP=1 cargo fuzz run -O "$target" "corpus/$target" "seeds/$target" -- \
  -max_total_time="$seconds" -max_len=65536 -timeout=30 -rss_limit_mb=3072 -print_final_stats=1 "$@"
