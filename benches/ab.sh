#!/usr/bin/env bash
# A/B of two framefeed binaries, interleaved rounds, medians: whole-buffer `run` on the 1080p and 4K clips, and
# uploads of a faststart MP4, a fragmented MP4 and an MPEG-TS clip to `framefeed serve` (live input).
#   bash benches/clips.sh && bash benches/ab.sh OLD_BINARY NEW_BINARY [ROUNDS]
# Build the old one from a worktree, e.g.: git worktree add /tmp/old REV && (cd /tmp/old &&
#   CARGO_TARGET_DIR=/tmp/old-target cargo build --release --features cli)   # then /tmp/old-target/release/framefeed
set -euo pipefail
old=${1:?usage: ab.sh OLD NEW [ROUNDS]}
new=${2:?usage: ab.sh OLD NEW [ROUNDS]}
rounds=${3:-5}
clips=$(cd "$(dirname "$0")/.." && pwd)/target/bench-clips
[ -f "$clips/frag1080.mp4" ] ||
  ffmpeg -v error -y -i "$clips/1080p.mp4" -c copy -movflags frag_keyframe+empty_moov "$clips/frag1080.mp4"
work=$(mktemp -d)
serve() { "$1" serve --addr 127.0.0.1:0 --max-streams 4 --max-streams-per-client 4 >"$work/$2" 2>/dev/null & }
serve "$old" old; pid_old=$!
serve "$new" new; pid_new=$!
trap 'kill $pid_old $pid_new 2>/dev/null; rm -rf "$work"' EXIT
sleep 1
addr_old=$(sed -n 's/^listening on //p' "$work/old")
addr_new=$(sed -n 's/^listening on //p' "$work/new")
for _ in $(seq "$rounds"); do
  for who in old new; do
    if [ "$who" = old ]; then bin=$old addr=$addr_old; else bin=$new addr=$addr_new; fi
    for clip in 1080p.mp4 4k.mp4; do
      /usr/bin/time -o "$work/t" -f %e "$bin" run -L 8 -B 4 --threads 2 "$clips/$clip" >/dev/null
      echo "run $clip $who $(cat "$work/t")"
    done
    for clip in 1080p.mp4 frag1080.mp4 1080p.ts; do
      t=$(curl -s -o "$work/body" -w '%{time_total}' -X POST -H 'Expect:' -H 'Transfer-Encoding: chunked' \
        --data-binary "@$clips/$clip" "http://$addr/videos?sequence_length=8&batch_size=2")
      echo "upload $clip $who $t $(grep -o '"frames":[0-9]*' "$work/body" | tail -1)"
    done
  done
done | tee "$work/all"
python3 - "$work/all" <<'PY'
import collections, statistics, sys
times = collections.defaultdict(list)
for line in open(sys.argv[1]):
    kind, clip, who, t = line.split()[:4]
    times[(kind, clip, who)].append(float(t))
print("| | old | new | new / old |\n|---|---|---|---|")
for kind, clip in sorted({(k, c) for k, c, _ in times}):
    o, n = (statistics.median(times[(kind, clip, w)]) for w in ("old", "new"))
    print(f"| {kind} {clip} | {o:.3f} s | {n:.3f} s | {n / o:.2f} |")
PY
