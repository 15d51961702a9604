#!/usr/bin/env bash
# NVDEC throughput on a GPU machine (issue 5): one framefeed operator (one process, one video), then 7 and 14 at
# once, against the floor `ffmpeg -hwaccel cuda -hwaccel_output_format cuda -i X -f null -` run the same way,
# with NVDEC utilisation and GPU memory (`nvidia-smi dmon -s um`) sampled meanwhile.
#   With the bundle: bash benches/gpu-run.sh bench (see benches/gpu-bundle.sh)
#   Directly:        bash benches/gpu.sh [FRAMEFEED] [CLIPS...]
# Prints, per clip and operator count: wall seconds, and frames/s over all operators.
set -euo pipefail
bin=${1:-target/release/framefeed}
shift || true
clips=("$@")
[ ${#clips[@]} -gt 0 ] || clips=(target/bench-clips/1080p.mp4 target/bench-clips/4k.mp4)
have_ffmpeg=$(command -v ffmpeg || true)
log=${OUT:-/tmp}/gpu_dmon.log
nvidia-smi dmon -s um -d 1 >"$log" 2>&1 &
dmon=$!
trap 'kill $dmon 2>/dev/null || true' EXIT
tmp=$(mktemp -d)

# run_n N COMMAND...: N copies at once; prints the wall seconds; fails if any copy fails.
run_n() {
  local n=$1 start end pids=() failed=0
  shift
  start=$(date +%s.%N)
  for i in $(seq "$n"); do
    "$@" >"$tmp/out.$i" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { failed=1; echo "copy $((i + 1)) failed: $(tail -3 "$tmp/out.$((i + 1))")" >&2; }
  done
  end=$(date +%s.%N)
  [ "$failed" = 0 ] || return 1
  echo "$start $end" | awk '{printf "%.3f", $2 - $1}'
}

for clip in "${clips[@]}"; do
  # Frames per video from framefeed's own CPU decode summary.
  frames=$("$bin" run --device cpu "$clip" | awk '/^frames:/ {print $2}')
  for n in 1 7 14; do
    t=$(run_n "$n" "$bin" run -L 8 -B 2 --device cuda "$clip")
    echo "framefeed $clip x$n: ${t} s, $(echo "$frames $n $t" | awk '{printf "%.0f", $1 * $2 / $3}') frames/s in all"
    grep -h "frames:" "$tmp"/out.1 >/dev/null || echo "  (no summary from framefeed: $(cat "$tmp"/out.1))"
    if [ -n "$have_ffmpeg" ]; then
      t=$(run_n "$n" ffmpeg -v error -hwaccel cuda -hwaccel_output_format cuda -i "$clip" -f null -)
      echo "ffmpeg-floor $clip x$n: ${t} s, $(echo "$frames $n $t" | awk '{printf "%.0f", $1 * $2 / $3}') frames/s in all"
    else
      echo "ffmpeg-floor: no ffmpeg on this machine"
    fi
  done
done
nvidia-smi --query-gpu=memory.used,memory.total --format=csv
echo "NVDEC utilisation and memory, 1 s samples: $log"
# The peak decoder use and framebuffer memory seen (columns found by name: they vary with the driver).
awk '/^# *gpu/ {for (i = 2; i <= NF; i++) {if ($i == "dec") d = i - 1; if ($i == "fb") f = i - 1}; next}
  !/^#/ && d && $d + 0 > dec {dec = $d + 0}
  !/^#/ && f && $f + 0 > fb {fb = $f + 0}
  END {print "peak NVDEC use " dec " %, peak GPU memory " fb " MiB"}' "$log"
rm -rf "$tmp"
