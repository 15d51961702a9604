#!/usr/bin/env bash
# Makes the benchmark clips (not committed: large) in target/bench-clips with the ffmpeg CLI (libx264):
#   1080p.mp4  1920x1080, 30 fps, 300 frames, testsrc2 + noise, H.264 High, CRF 23, GOP 60
#   4k.mp4     3840x2160, 30 fps, 120 frames, same settings
#   4k_60s.mp4 3840x2160, 30 fps, 1800 frames (60 s), testsrc2, ultrafast preset at 6 Mb/s (~45 MB; memory bound)
#   long_first300.mp4  the first 300 frames of ../shared/videos/long_640x480_9000f.mp4 (stream copy)
#   1080p_live.ts   1920x1080, 30 fps, 300 frames, testsrc2 + noise, as a live encoder sends it: x264 veryfast,
#                   zerolatency (no B-frames, sliced threads), 8 Mb/s, GOP 60, MPEG-TS
#   1080p.ts        1080p.mp4's stream copied into MPEG-TS (with B-frames)
#   svc_0..7.ts     8 different 1080p clips of 75 frames (testsrc2 from t=0,10,..70 s + noise), veryfast, MPEG-TS
# Usage: bash benches/clips.sh [--with-60s]
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/bench-clips
mkdir -p "$out"
ff() { ffmpeg -hide_banner -loglevel error -y "$@"; }
src() { echo "testsrc2=size=$1:rate=30,noise=alls=12:allf=t+u"; }
[ -f "$out/1080p.mp4" ] || ff -f lavfi -i "$(src 1920x1080)" -frames:v 300 -c:v libx264 -preset medium -crf 23 -g 60 -pix_fmt yuv420p "$out/1080p.mp4"
[ -f "$out/4k.mp4" ] || ff -f lavfi -i "$(src 3840x2160)" -frames:v 120 -c:v libx264 -preset fast -crf 23 -g 60 -pix_fmt yuv420p "$out/4k.mp4"
if [ "${1:-}" = "--with-60s" ] && [ ! -f "$out/4k_60s.mp4" ]; then
  ff -f lavfi -i "testsrc2=size=3840x2160:rate=30" -frames:v 1800 -c:v libx264 -preset ultrafast -b:v 6M -maxrate 6M -bufsize 12M -g 60 -pix_fmt yuv420p "$out/4k_60s.mp4"
fi
[ -f "$out/1080p_live.ts" ] || ff -f lavfi -i "$(src 1920x1080)" -frames:v 300 -c:v libx264 -preset veryfast -tune zerolatency -b:v 8M -maxrate 8M -bufsize 8M -g 60 -pix_fmt yuv420p "$out/1080p_live.ts"
[ -f "$out/1080p.ts" ] || ff -i "$out/1080p.mp4" -c copy "$out/1080p.ts"
for i in 0 1 2 3 4 5 6 7; do
  [ -f "$out/svc_$i.ts" ] || ff -f lavfi -i "testsrc2=size=1920x1080:rate=30,trim=start=$((i * 10)),setpts=PTS-STARTPTS,noise=alls=12:allf=t+u" -frames:v 75 -c:v libx264 -preset veryfast -crf 23 -g 60 -pix_fmt yuv420p "$out/svc_$i.ts"
done
long=../shared/videos/long_640x480_9000f.mp4
if [ -f "$long" ] && [ ! -f "$out/long_first300.mp4" ]; then
  ff -i "$long" -map 0:v:0 -c copy -frames:v 300 "$out/long_first300.mp4"
fi
ls -l "$out"
