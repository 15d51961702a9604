#!/usr/bin/env bash
# NVDEC throughput on a GPU machine (issue 5): one framefeed operator, then 7 and 14 at once, against the floor
# `ffmpeg -hwaccel cuda -hwaccel_output_format cuda -i X -f null -` run the same way, with NVDEC utilisation
# (`nvidia-smi dmon -s u`) and GPU memory sampled meanwhile.
#   Here:  cargo build --release --features cuda && bash benches/clips.sh
#   There: REQUIRE_GPU=1 bash benches/gpu.sh [FRAMEFEED] [CLIPS...]
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
run_n() { # n command...
  local n=$1; shift
  local start end
  start=$(date +%s.%N)
  for _ in $(seq "$n"); do "$@" >/dev/null 2>&1 & done
  wait
  end=$(date +%s.%N)
  echo "$start $end" | awk '{print $2 - $1}'
}
for clip in "${clips[@]}"; do
  frames=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$clip" 2>/dev/null || echo "?")
  for n in 1 7 14; do
    t=$(run_n "$n" "$bin" run -L 8 -B 2 --device cuda "$clip")
    echo "framefeed $clip x$n: ${t}s ($frames frames each)"
    if [ -n "$have_ffmpeg" ]; then
      t=$(run_n "$n" ffmpeg -v error -hwaccel cuda -hwaccel_output_format cuda -i "$clip" -f null -)
      echo "ffmpeg-floor $clip x$n: ${t}s"
    else
      echo "ffmpeg-floor: no ffmpeg on this machine"
    fi
  done
done
nvidia-smi --query-gpu=memory.used,memory.total --format=csv
echo "NVDEC utilisation log: $log"
