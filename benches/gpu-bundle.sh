#!/usr/bin/env bash
# Packs issue 5's GPU checks for a GPU machine that has no Rust toolchain and no FFmpeg, within the `device`
# tool's 64 MiB carry limit (Debian's FFmpeg libraries and their dependencies are ~160 MB, too much):
#   .gpu/lib/        a minimal FFmpeg 5.1.9 (the release Debian 12 ships, built from Debian's source package:
#                    the decoders, parsers and demuxers framefeed's tests use, the NVDEC hwaccels, libdav1d for
#                    AV1 on the CPU), same sonames, so framefeed's binaries load it through LD_LIBRARY_PATH
#   .gpu/bin/        framefeed (release, --features cuda,cli), the gpu_backend test binary, the library's unit
#                    tests (their NVDEC seeking test), the gpu_operators benchmark, a minimal ffmpeg CLI (the `-hwaccel cuda` floor), all stripped
#   .gpu/wheel/      the Python package built with the `cuda` feature (WHEEL=0 skips it)
#   .gpu-videos/     the shared corpus (without the 9000-frame and corrupted files, which the GPU test skips)
#   .gpu-clips/      1080p and 4K clips, H.264 and HEVC, for benches/gpu.sh
# Here (Debian 12; needs deb-src in apt's sources for `apt-get source`):
#   bash benches/gpu-bundle.sh
# There, with the device tool (carry [".gpu", ".gpu-videos"], then [".gpu", ".gpu-clips"]):
#   bash benches/gpu-run.sh tests        bash benches/gpu-run.sh bench        bash benches/gpu-run.sh operators
# Checked without a GPU: framefeed on these libraries decodes every fixture and corpus file byte-identically to
# Debian's FFmpeg (`bash benches/gpu-bundle.sh --check`).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=target/gpu-bundle
ff=$work/ffmpeg
version=5.1.9
mkdir -p "$work"

if [ ! -x "$ff/bin/ffmpeg" ]; then
  apt-get install -y -qq nasm libffmpeg-nvenc-dev libdav1d-dev >/dev/null
  if [ ! -d "$work/ffmpeg-$version" ]; then
    (cd "$work" && apt-get source --download-only -qq "ffmpeg=7:$version-0+deb12u1" 2>/dev/null ||
      apt-get source --download-only -qq ffmpeg) || {
      echo "apt-get source failed: add 'Types: deb-src' entries to /etc/apt/sources.list.d (see this script)" >&2
      exit 1
    }
    tar -C "$work" -xf "$work"/ffmpeg_*.orig.tar.xz
  fi
  src=$(ls -d "$work"/ffmpeg-5.1.*/ | head -1)
  (
    cd "$src"
    ./configure --prefix="$root/$ff" --disable-static --enable-shared --disable-doc --disable-network \
      --disable-autodetect --disable-everything --disable-avdevice --disable-postproc --disable-ffplay \
      --disable-ffprobe --enable-ffmpeg --enable-pthreads --enable-ffnvcodec --enable-nvdec --enable-libdav1d \
      --enable-decoder=h264,hevc,vp8,vp9,av1,libdav1d,mpeg4,mpeg1video,mpeg2video,vc1,wmv3,h263 \
      --enable-hwaccel=h264_nvdec,hevc_nvdec,vp8_nvdec,vp9_nvdec,av1_nvdec,mpeg1_nvdec,mpeg2_nvdec,mpeg4_nvdec,vc1_nvdec,wmv3_nvdec \
      --enable-parser=h264,hevc,vp8,vp9,av1,mpeg4video,mpegvideo,vc1,aac,mpegaudio,ac3,opus,vorbis \
      --enable-demuxer=mov,matroska,avi,mpegts,h264,hevc,ivf,m4v,mpegps,mpegvideo,flv,obu,rawvideo \
      --enable-bsfs --enable-protocol=file,pipe --enable-muxer=null,rawvideo \
      --enable-encoder=wrapped_avframe,rawvideo \
      --enable-filter=buffer,buffersink,abuffer,abuffersink,format,aformat,null,anull,scale,aresample,hwdownload,hwupload,copy,trim,atrim,setpts,fps \
      >"$root/$work/configure.log" 2>&1
    make -j"$(nproc)" >"$root/$work/make.log" 2>&1
    make install >>"$root/$work/make.log" 2>&1
  )
fi

cargo build --release --features cuda,cli --bin framefeed
test_bin=$(cargo test --release --features cuda --no-run --test gpu_backend 2>&1 |
  grep -o 'target/release/deps/gpu_backend-[0-9a-f]*' | tail -1)
lib_bin=$(cargo test --release --features cuda --no-run --lib 2>&1 |
  grep -o 'target/release/deps/framefeed-[0-9a-f]*' | tail -1)
ops_bin=$(cargo bench --features cuda --no-run --bench gpu_operators 2>&1 |
  grep -o 'target/release/deps/gpu_operators-[0-9a-f]*' | tail -1)

rm -rf .gpu .gpu-videos && mkdir -p .gpu/lib .gpu/bin .gpu-videos
for lib in avcodec.so.59 avformat.so.59 avutil.so.57 swscale.so.6 swresample.so.4 avfilter.so.8; do
  cp -L "$ff/lib/lib$lib" .gpu/lib/
done
cp -L "$(ldconfig -p | awk '/libdav1d.so.6 .*x86-64/ {print $NF; exit}')" .gpu/lib/
strip -o .gpu/bin/framefeed target/release/framefeed
strip -o .gpu/bin/gpu_backend "$test_bin"
strip -o .gpu/bin/gpu_operators "$ops_bin"
strip -o .gpu/bin/unit_tests "$lib_bin"
strip -o .gpu/bin/ffmpeg "$ff/bin/ffmpeg"
for f in ../shared/videos/*; do
  case $f in *long_*|*corrupted*) ;; *) cp "$f" .gpu-videos/ ;; esac
done

if [ "${1:-}" = "--check" ]; then
  # framefeed on the bundled libraries against Debian's ffmpeg CLI (run without them).
  bad=0
  for f in tests/fixtures/*.{mp4,webm,mkv,avi,ts,mov,hevc,h264} .gpu-videos/*.{mp4,mkv,mov,avi,webm}; do
    case $f in *zero_frames*|*res_change*) continue ;; esac
    LD_LIBRARY_PATH=$PWD/.gpu/lib .gpu/bin/framefeed run "$f" --raw-out "$work/ours.rgb" >/dev/null 2>&1
    ffmpeg -v error -i "$f" -fps_mode passthrough -f rawvideo -pix_fmt rgb24 -y "$work/theirs.rgb"
    if cmp -s "$work/ours.rgb" "$work/theirs.rgb"; then echo "same bytes: $f"; else echo "DIFFERENT: $f"; bad=1; fi
  done
  [ "$bad" = 0 ] || exit 1
fi

# Bench clips (600 frames at 1080p, 240 at 4K): small enough to carry with everything else in one call.
mkdir -p .gpu-clips
enc() { ffmpeg -hide_banner -loglevel error -y -f lavfi -i "testsrc2=size=$1:rate=30" -frames:v "$2" "${@:4}" -pix_fmt yuv420p ".gpu-clips/$3"; }
[ -f .gpu-clips/1080p_h264.mp4 ] || enc 1920x1080 600 1080p_h264.mp4 -c:v libx264 -preset veryfast -b:v 3M -g 60
[ -f .gpu-clips/1080p_hevc.mp4 ] || enc 1920x1080 600 1080p_hevc.mp4 -c:v libx265 -preset ultrafast -b:v 3M -x265-params log-level=none:keyint=60
[ -f .gpu-clips/4k_h264.mp4 ] || enc 3840x2160 240 4k_h264.mp4 -c:v libx264 -preset veryfast -b:v 8M -g 60
[ -f .gpu-clips/4k_hevc.mp4 ] || enc 3840x2160 240 4k_hevc.mp4 -c:v libx265 -preset ultrafast -b:v 8M -x265-params log-level=none:keyint=60

# The Python package with the `cuda` feature (abi3, so the GPU machine's own Python takes it), for
# `gpu-run.sh python`.
if [ "${WHEEL:-1}" = 1 ]; then
  [ -x target/gpu-bundle/venv/bin/maturin ] || {
    python3 -m venv target/gpu-bundle/venv && target/gpu-bundle/venv/bin/pip install -q 'maturin>=1.7,<2'
  }
  rm -rf .gpu/wheel
  target/gpu-bundle/venv/bin/maturin build -q --release --strip --auditwheel skip -m python/Cargo.toml --features cuda -o .gpu/wheel
fi

du -sh .gpu .gpu-videos .gpu-clips
# One device call carries the tracked tree plus the paths it names, 64 MiB in all.
tree=$(git ls-files -z | du -cm --files0-from=- | tail -1 | cut -f1)
for pair in ".gpu .gpu-videos" ".gpu .gpu-clips"; do
  # shellcheck disable=SC2086
  size=$(du -cm $pair | tail -1 | cut -f1)
  echo "carry [$pair] + tree: $((size + tree)) MiB"
  [ $((size + tree)) -lt 62 ] || { echo "over the device tool's 64 MiB" >&2; exit 1; }
done
