#!/usr/bin/env bash
# The cost of showing phone videos upright (issue 48): the same 1080p H.264 clip (benches/clips.sh) with no display
# matrix and with a quarter turn's (stream copy, `rotate=90`), decoded by `framefeed run` plain (RGB, every frame)
# and with the training transforms (resize 256 + crop 224, f32 CFHW), and by the ffmpeg CLI to rgb24 (its own
# autorotation) for scale. hyperfine interleaves nothing, so each pair runs back to back, several rounds.
#   apt-get install -y hyperfine && cargo build --release --features cli && bash benches/rotation.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
bash benches/clips.sh > /dev/null
clips=target/bench-clips
[ -f "$clips/1080p_rot90.mp4" ] ||
  ffmpeg -hide_banner -loglevel error -y -i "$clips/1080p.mp4" -c copy -metadata:s:v:0 rotate=90 "$clips/1080p_rot90.mp4"
ff=target/release/framefeed
rounds=${1:-3}
train="--resize-shorter 256 --crop 224x224 --dtype float32 --layout CFHW"
for round in $(seq "$rounds"); do
  echo "== round $round"
  hyperfine -N -w 1 -r 5 --export-json "target/rotation_plain_$round.json" \
    "$ff run $clips/1080p.mp4 -L 8 -B 2 --threads 2" \
    "$ff run $clips/1080p_rot90.mp4 -L 8 -B 2 --threads 2" \
    "$ff run $clips/1080p_rot90.mp4 -L 8 -B 2 --threads 2 --no-autorotate" | grep -E "Time|±|run "
  hyperfine -N -w 1 -r 5 --export-json "target/rotation_train_$round.json" \
    "$ff run $clips/1080p.mp4 -L 8 -B 2 --threads 2 $train" \
    "$ff run $clips/1080p_rot90.mp4 -L 8 -B 2 --threads 2 $train" | grep -E "Time|run "
  hyperfine -N -w 1 -r 3 --export-json "target/rotation_ffmpeg_$round.json" \
    "ffmpeg -v quiet -threads 2 -i $clips/1080p.mp4 -f rawvideo -pix_fmt rgb24 -y /dev/null" \
    "ffmpeg -v quiet -threads 2 -i $clips/1080p_rot90.mp4 -f rawvideo -pix_fmt rgb24 -y /dev/null" | grep -E "Time|ffmpeg "
done
