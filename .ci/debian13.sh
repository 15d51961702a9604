#!/usr/bin/env bash
# CI's other machine: a Debian 13 (trixie) system made with debootstrap from Debian's archive, run in a chroot.
#
# 1. As a user installs the wheel: the clean system (Python, nothing else: no FFmpeg, no Rust, no compiler) pip
#    installs dist/'s self-contained wheel (python/build-wheel.sh), which must decode the built-in sample and corpus
#    clips (H.264 8- and 10-bit, HEVC, VP9, AV1) frame for frame as Debian 12's `ffmpeg` does, through the operator
#    and the reader; its `[torch]` and `[ray]` extras must resolve.
# 2. Built from source against Debian 13's FFmpeg 7.1: its development files go in, and framefeed's conformance,
#    sampling, damaged-video and colour tests run against 7.1's own `ffmpeg`, with this machine's Rust toolchain and crate cache lent to
#    the chroot (bind mounts; Debian 13's rustc is older than the crate's rust-version).
#
# Needs root, debootstrap, and ../shared beside the repository. The chroot is made afresh each run (under
# FRAMEFEED_DEBIAN13_ROOT); the packages it downloads (the base system's, and the development files') are kept
# in /var/cache/framefeed-ci for the next run on the same machine.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
SHARED=$(cd ../shared && pwd)
ROOT=${FRAMEFEED_DEBIAN13_ROOT:-/var/tmp/framefeed-debian13}
CACHE=/var/cache/framefeed-ci/debootstrap-trixie
APT_CACHE=/var/cache/framefeed-ci/apt-trixie
# Debian's archive at the address this machine's apt sources give it (its bookworm entry: the same archive serves
# trixie), so that the run follows the machine's mirror.
. "$REPO/python/apt-archive.sh"
MIRROR=$(apt_archive_uri bookworm)
TOOLCHAIN=$(rustc --print sysroot)
REGISTRY=${CARGO_HOME:-$HOME/.cargo}/registry
WHEEL=$(ls "$REPO"/dist/framefeed-*manylinux_2_28_x86_64.whl)
# The bind mounts, in the order they are made (undone in reverse).
MOUNTS=(proc dev dev/pts src/main src/shared var/cache/apt/archives opt/rust opt/cargo/registry)

. "$REPO/.ci/chroot.sh"
trap remove_root EXIT
remove_root

echo "== debootstrap trixie into $ROOT"
mkdir -p "$CACHE" "$APT_CACHE"
debootstrap --variant=minbase --cache-dir="$CACHE" --include=python3,python3-venv trixie "$ROOT" "$MIRROR" \
  >/dev/null
# HTTPS from inside (pip, cargo): the host's CA bundle, which may hold a proxy's CA that Debian's does not.
cp /etc/ssl/certs/ca-certificates.crt "$ROOT/etc/host-ca.crt"
mkdir -p "$ROOT/src/main" "$ROOT/src/shared" "$ROOT/opt/rust" "$ROOT/opt/cargo/registry" "$ROOT/wheel"
mount -t proc proc "$ROOT/proc"
mount --bind /dev "$ROOT/dev"
mount --bind /dev/pts "$ROOT/dev/pts"
mount --bind "$REPO" "$ROOT/src/main"
mount --bind -o ro "$SHARED" "$ROOT/src/shared"
cp "$WHEEL" "$ROOT/wheel/"
in_root() {
  chroot "$ROOT" /usr/bin/env -i HOME=/root PATH=/opt/rust/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    PIP_CERT=/etc/host-ca.crt SSL_CERT_FILE=/etc/host-ca.crt CARGO_HTTP_CAINFO=/etc/host-ca.crt \
    PIP_DISABLE_PIP_VERSION_CHECK=1 CARGO_HOME=/opt/cargo CARGO_TARGET_DIR=/build/target CARGO_INCREMENTAL=0 \
    CARGO_PROFILE_DEV_DEBUG=line-tables-only DEBIAN_FRONTEND=noninteractive FRAMEFEED_REQUIRE=ffmpeg,corpus "$@"
}

echo "== 1. the wheel on a clean Debian 13"
in_root sh -c 'for t in ffmpeg cc gcc clang rustc cargo; do if command -v $t; then echo "$t is installed" >&2; exit 1; fi; done
  if ls /usr/lib/x86_64-linux-gnu/libavcodec.so* 2>/dev/null; then echo "libavcodec is installed" >&2; exit 1; fi'
VIDEOS=(sample av1_video.mkv testsrc2_h265.mp4 h264_10bits.mp4 testsrc2_vp9.webm dog_848x464_h264_aac.mp4)
python3 .ci/wheel_check.py reference "$ROOT/wheel/reference.json" "$SHARED/videos" "${VIDEOS[@]}"
in_root python3 -m venv /opt/venv
in_root /opt/venv/bin/pip install -q "/wheel/$(basename "$WHEEL")"
(cd / && in_root /opt/venv/bin/python /src/main/.ci/wheel_check.py check /wheel/reference.json /src/shared/videos \
  "${VIDEOS[@]}")
# The extras resolve against today's PyPI (metadata only: nothing is downloaded or installed).
in_root /opt/venv/bin/pip install -q --dry-run "framefeed[torch,ray] @ file:///wheel/$(basename "$WHEEL")"
echo "the [torch] and [ray] extras resolve"

echo "== 2. built from source against Debian 13's FFmpeg"
mount --bind "$APT_CACHE" "$ROOT/var/cache/apt/archives"
mount --bind -o ro "$TOOLCHAIN" "$ROOT/opt/rust"
mount --bind "$REGISTRY" "$ROOT/opt/cargo/registry"
in_root apt-get install -y -q --no-install-recommends libavcodec-dev libavformat-dev libavutil-dev \
  libswscale-dev libswresample-dev libclang-dev clang pkg-config ffmpeg gcc libc6-dev >/dev/null
in_root ffmpeg -hide_banner -version | sed -n 1p
in_root sh -c 'cd /src/main && cargo test --locked --features cli --test conformance --test clip_sampling --test random_access \
  --test containers --test cli --test damaged_videos --test colour_metadata --test audio_beside_frames'
