#!/usr/bin/env bash
# Packs what the card checks' one device run needs into .gpu-card/ (git-ignored), within the device tool's 64 MiB
# carry (with the tracked tree, and with .gpu when benches/gpu-bundle.sh was run too):
#   wheel/    the self-contained x86-64 wheel (dist/, built by python/build-wheel.sh when it is not there):
#             what `pip install framefeed` gives a user, FFmpeg and NVDEC loading inside
#   videos/   the shared corpus with its MANIFEST.json and rotated/ (not the 9000-frame clip)
#   clips/    a 1080p H.264 clip for the reader's random access (and TorchCodec's, where it imports)
#   cams/     a 20 s 720p30 camera clip as MPEG-TS with its packet table, for benches/mux_cameras.py's paced
#             senders (no ffmpeg or ffprobe needed there)
# Then, through the device tool (carry [".gpu-card"], or [".gpu-card", ".gpu"] for the Rust GPU tests):
#   bash benches/gpu-run.sh card
# Checked without a GPU: `bash benches/gpu-card-pack.sh --check` runs gpu-run.sh's Python parts with the
# CPU in the GPU's place (every comparison must read 0.000; the cameras run on the CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
out=.gpu-card
wheel=$(ls dist/framefeed-*-manylinux_2_28_x86_64.whl 2>/dev/null | head -1 || true)
if [ -z "$wheel" ]; then
  bash python/build-wheel.sh x86_64
  wheel=$(ls dist/framefeed-*-manylinux_2_28_x86_64.whl | head -1)
fi
rm -rf "$out" && mkdir -p "$out/wheel" "$out/videos" "$out/clips" "$out/cams"
cp "$wheel" "$out/wheel/"
for f in ../shared/videos/*; do
  case $f in *long_*) ;; *) cp -r "$f" "$out/videos/" ;; esac
done
ffmpeg -hide_banner -loglevel error -y -f lavfi -i "testsrc2=size=1920x1080:rate=30" -frames:v 300 \
  -c:v libx264 -preset veryfast -b:v 3M -g 60 -pix_fmt yuv420p "$out/clips/1080p_h264.mp4"
# The camera clip, its MPEG-TS and packet table, made by the bench's own code (then the FLV is not needed).
venv_python=${PYTHON:-.venv/bin/python}
CLIPS=$out/cams SENDER=paced "$venv_python" - <<'EOF'
import os, sys
sys.path.insert(0, "benches")
import mux_cameras, paced_sender
ts = mux_cameras.transport_stream(mux_cameras.clip(20))
paced_sender.frames_of(ts)
os.remove(ts[:-3] + ".flv")
EOF
du -sh "$out"/*
tree=$(git ls-files -z | du -cm --files0-from=- | tail -1 | cut -f1)
size=$(du -cm "$out" | tail -1 | cut -f1)
gpu=$( [ -d .gpu ] && du -cm .gpu | tail -1 | cut -f1 || echo 0)
echo "carry [$out] + tree: $((size + tree)) MiB; with .gpu: $((size + tree + gpu)) MiB (the limit: 64)"
[ $((size + tree)) -lt 62 ] || { echo "over the device tool's 64 MiB" >&2; exit 1; }

if [ "${1:-}" = "--check" ]; then
  # gpu-run.sh's Python parts with the CPU in the GPU's place, from the packed wheel, as the device runs them.
  CHECK_ON_CPU=1 PYTHON="$venv_python" bash benches/gpu-run.sh card
fi
