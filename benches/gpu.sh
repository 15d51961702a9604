#!/usr/bin/env bash
# NVDEC throughput on a GPU machine: one framefeed operator (one process, one video), then 7 and 14 at once,
# against the floor `ffmpeg -hwaccel cuda -hwaccel_output_format cuda -i X -f null -` run the same way, and
# framefeed with the transforms in the kernel (crop 224 + f32 + CFHW). Runs are interleaved (floor, plain,
# transforms) and repeated; the median of the repeats is reported. NVDEC utilisation and GPU memory are
# sampled meanwhile (`nvidia-smi dmon -s um`, 1 s) and reported per phase.
#   With the bundle: bash benches/gpu-run.sh bench (see benches/gpu-bundle.sh)
#   Directly:        bash benches/gpu.sh [FRAMEFEED] [CLIPS...]
# Prints one line per clip, operator count and variant: median wall seconds, frames/s over all operators,
# and the peak NVDEC use and GPU memory seen while that variant ran.
set -euo pipefail
bin=${1:-target/release/framefeed}
shift || true
clips=("$@")
[ ${#clips[@]} -gt 0 ] || clips=(target/bench-clips/1080p.mp4 target/bench-clips/4k.mp4)
reps=${REPS:-3}
# Fewer repeats for the longest runs.
reps14=${REPS14:-1}
counts=${COUNTS:-1 7 14}
# Each operator decodes its clip this many times over (framefeed: the file fed again; ffmpeg: -stream_loop), so
# that process and CUDA context start-up (paid alike by both) weighs little against decoding.
passes=${PASSES:-3}
have_ffmpeg=$(command -v ffmpeg || true)
log=${OUT:-/tmp}/gpu_dmon.log
phases=${OUT:-/tmp}/gpu_phases.log
: >"$phases"
nvidia-smi dmon -s um -o T -d 1 >"$log" 2>&1 &
dmon=$!
trap 'kill $dmon 2>/dev/null || true' EXIT
tmp=$(mktemp -d)
sleep 2 # a baseline sample before the first run

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

median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

# The peak of dmon's column `name` over the samples taken between two HH:MM:SS times.
peak() {
  awk -v from="$2" -v to="$3" -v name="$1" '
    /^# *Time/ {for (i = 2; i <= NF; i++) if ($i == name) c = i; next}
    /^#/ {next}
    c && $1 >= from && $1 <= to && $c + 0 > m {m = $c + 0}
    END {print m + 0}' "$log"
}

for clip in "${clips[@]}"; do
  # Frames per video from framefeed's own CPU decode summary.
  frames=$("$bin" run --device cpu "$clip" | awk -v p="$passes" '/^frames:/ {print $2 * p}')
  inputs=()
  for _ in $(seq "$passes"); do inputs+=("$clip"); done
  for n in $counts; do
    declare -A times=() first=() last=()
    r=$reps
    [ "$n" -lt 14 ] || r=$reps14
    for rep in $(seq "$r"); do
      for variant in floor plain transforms; do
        from=$(date +%H:%M:%S)
        case $variant in
        floor)
          [ -n "$have_ffmpeg" ] || continue
          t=$(run_n "$n" ffmpeg -v error -hwaccel cuda -hwaccel_output_format cuda -stream_loop $((passes - 1)) \
            -i "$clip" -f null -) ;;
        plain)
          t=$(run_n "$n" "$bin" run -L 8 -B 2 --device cuda --no-cpu-fallback "${inputs[@]}") ;;
        transforms)
          t=$(run_n "$n" "$bin" run -L 8 -B 2 --device cuda --no-cpu-fallback --crop 224x224 --dtype f32 \
            --layout cfhw "${inputs[@]}") ;;
        esac
        to=$(date +%H:%M:%S)
        times[$variant]="${times[$variant]:-} $t"
        first[$variant]=${first[$variant]:-$from}
        last[$variant]=$to
        # framefeed's own figure for its first copy (after its CUDA set-up), for comparison.
        own=$(awk '/^frames\/s:/ {print $2}' "$tmp/out.1")
        echo "$clip x$n $variant rep $rep: $t s ($from-$to)${own:+ (first copy in-process: $own frames/s)}" >>"$phases"
      done
    done
    for variant in floor plain transforms; do
      [ -n "${times[$variant]:-}" ] || { echo "$variant: no ffmpeg on this machine"; continue; }
      t=$(echo "${times[$variant]}" | median)
      fps=$(echo "$frames $n $t" | awk '{printf "%.0f", $1 * $2 / $3}')
      echo "$variant $(basename "$clip") x$n: median ${t} s of [${times[$variant]# }], $fps frames/s in all," \
        "peak NVDEC $(peak dec "${first[$variant]}" "${last[$variant]}") %," \
        "peak GPU memory $(peak fb "${first[$variant]}" "${last[$variant]}") MiB"
    done
    unset times first last
  done
done
nvidia-smi --query-gpu=memory.used,memory.total --format=csv
echo "NVDEC utilisation and memory, 1 s samples: $log; phases: $phases"
rm -rf "$tmp"
