#!/usr/bin/env bash
# The cost of the same output every run (issue 73): two framefeed binaries, interleaved rounds, medians of
# `framefeed run` on a clean long clip (where a per-frame cost would show most) and on damaged copies of it
# (bytes overwritten in one place, and in five), with the default two decoder threads.
#   bash benches/damaged_ab.sh OLD_BINARY NEW_BINARY [ROUNDS]
# Build the old one from a worktree: git worktree add /tmp/old REV && (cd /tmp/old &&
#   CARGO_TARGET_DIR=/tmp/old-target cargo build --release --features cli)   # then /tmp/old-target/release/framefeed
set -euo pipefail
old=${1:?usage: damaged_ab.sh OLD NEW [ROUNDS]}
new=${2:?usage: damaged_ab.sh OLD NEW [ROUNDS]}
rounds=${3:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
clean=$root/../shared/videos/long_640x480_9000f.mp4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Damaged copies, the same every time: 400 bytes overwritten at 40 % of the file; and at 5 places.
python3 - "$clean" "$work" <<'PY'
import random, sys
data = bytearray(open(sys.argv[1], "rb").read())
def hit(buf, at, seed):
    rng = random.Random(seed)
    start = int(len(buf) * at)
    buf[start:start + 400] = bytes(rng.randrange(256) for _ in range(400))
one = bytearray(data); hit(one, 0.4, 7)
five = bytearray(data)
for k, at in enumerate((0.15, 0.3, 0.45, 0.6, 0.75)):
    hit(five, at, k + 1)
open(sys.argv[2] + "/damaged_once.mp4", "wb").write(one)
open(sys.argv[2] + "/damaged_5x.mp4", "wb").write(five)
PY
for _ in $(seq "$rounds"); do
  for who in old new; do
    if [ "$who" = old ]; then bin=$old; else bin=$new; fi
    for clip in "$clean" "$work/damaged_once.mp4" "$work/damaged_5x.mp4"; do
      /usr/bin/time -o "$work/t" -f %e "$bin" run -L 8 -B 4 "$clip" >/dev/null 2>&1
      echo "$(basename "$clip") $who $(cat "$work/t")"
    done
  done
done | tee "$work/all"
echo
echo "medians (s):"
for clip in long_640x480_9000f.mp4 damaged_once.mp4 damaged_5x.mp4; do
  o=$(awk -v c="$clip" '$1 == c && $2 == "old" {print $3}' "$work/all" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  n=$(awk -v c="$clip" '$1 == c && $2 == "new" {print $3}' "$work/all" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  echo "$clip old $o new $n new/old $(python3 -c "print(round($n / $o, 2))")"
done
