#!/usr/bin/env bash
# NVDEC throughput on a GPU machine: one framefeed operator (one process, one video), then 7 and 14 at once,
# against the floor `ffmpeg -hwaccel cuda -hwaccel_output_format cuda -i X -f null -` run the same way, with
# both NVDEC drivers (plain: the direct nvcuvid decoder, the default; hwaccel: libavcodec's), and framefeed
# with the transforms in the kernel (crop 224 + f32 + CFHW, direct driver). Runs are interleaved (floor, plain,
# transforms) and repeated; the median of the repeats is reported. NVDEC utilisation and GPU memory are
# sampled meanwhile (`nvidia-smi dmon -s um`, 1 s) and reported per phase.
#   With the bundle: bash benches/gpu-run.sh bench (see benches/gpu-bundle.sh)
#   Directly:        bash benches/gpu.sh [FRAMEFEED] [CLIPS...]
# Prints one line per clip, operator count and variant: median wall seconds, frames/s over all operators (wall
# clock, start-up included: the like-for-like figure), the median sum of the copies' in-process rates (steady
# state), and the peak NVDEC use and GPU memory seen while that variant ran.
set -euo pipefail
bin=${1:-target/release/framefeed}
shift || true
clips=("$@")
[ ${#clips[@]} -gt 0 ] || clips=(target/bench-clips/1080p.mp4 target/bench-clips/4k.mp4)
reps=${REPS:-3}
# Fewer repeats for the longest runs.
reps14=${REPS14:-1}
counts=${COUNTS:-1 7 14}
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
  rm -f "$tmp"/out.*
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
  frames=$("$bin" run --device cpu "$clip" | awk '/^frames:/ {print $2}')
  for n in $counts; do
    declare -A times=() first=() last=() owns=()
    r=$reps
    [ "$n" -lt 14 ] || r=$reps14
    for rep in $(seq "$r"); do
      for variant in floor plain hwaccel transforms; do
        from=$(date +%H:%M:%S)
        case $variant in
        floor)
          [ -n "$have_ffmpeg" ] || continue
          t=$(run_n "$n" ffmpeg -v info -hide_banner -nostats -hwaccel cuda -hwaccel_output_format cuda -benchmark \
            -i "$clip" -f null -) ;;
        plain)
          t=$(run_n "$n" "$bin" run -L 8 -B 2 --device cuda --no-cpu-fallback "$clip") ;;
        hwaccel)
          t=$(run_n "$n" "$bin" run -L 8 -B 2 --device cuda --no-cpu-fallback --nvdec hwaccel "$clip") ;;
        transforms)
          t=$(run_n "$n" "$bin" run -L 8 -B 2 --device cuda --no-cpu-fallback --crop 224x224 --dtype f32 \
            --layout cfhw "$clip") ;;
        esac
        to=$(date +%H:%M:%S)
        times[$variant]="${times[$variant]:-} $t"
        first[$variant]=${first[$variant]:-$from}
        last[$variant]=$to
        # Steady state: the sum over the copies of each one's own rate while decoding (framefeed's summary,
        # after its CUDA set-up; ffmpeg's -benchmark rtime, which includes its decoder's set-up).
        own=$(cat "$tmp"/out.* | awk -v f="$frames" '/^frames\/s:/ {s += $2}
          /rtime=/ {match($0, /rtime=[0-9.]+/); s += f / substr($0, RSTART + 6, RLENGTH - 6)} END {printf "%.0f", s}')
        owns[$variant]="${owns[$variant]:-} $own"
        echo "$clip x$n $variant rep $rep: $t s ($from-$to), in-process sum $own frames/s" >>"$phases"
      done
    done
    for variant in floor plain hwaccel transforms; do
      [ -n "${times[$variant]:-}" ] || { echo "$variant: no ffmpeg on this machine"; continue; }
      t=$(echo "${times[$variant]}" | median)
      fps=$(echo "$frames $n $t" | awk '{printf "%.0f", $1 * $2 / $3}')
      own=$(echo "${owns[$variant]}" | median)
      echo "$variant $(basename "$clip") x$n: median ${t} s of [${times[$variant]# }], $fps frames/s in all," \
        "in-process sum $own frames/s," \
        "peak NVDEC $(peak dec "${first[$variant]}" "${last[$variant]}") %," \
        "peak GPU memory $(peak fb "${first[$variant]}" "${last[$variant]}") MiB"
    done
    unset times first last owns
  done
done
nvidia-smi --query-gpu=memory.used,memory.total --format=csv
echo "NVDEC utilisation and memory, 1 s samples: $log; phases: $phases"
rm -rf "$tmp"
