#!/usr/bin/env bash
# CI: the Arm wheel where it would run (issue 61). A clean Debian 13 arm64 system (debootstrap: Python, nothing
# else: no FFmpeg, no compiler) runs in a chroot through qemu-user (binfmt_misc); it pip-installs dist/'s
# manylinux_2_28_aarch64 wheel (`python/build-wheel.sh aarch64`), which must decode the built-in sample and the
# shared corpus's clips through the operator (`VideoInput`) and the reader (`VideoReader`), every frame's MD5
# equal to this machine's `ffmpeg` RGB24 decode (Debian 12, x86-64), and fail `device="cuda"` with framefeed's
# DeviceError. Then, only as a sanity check of speed under emulation, the x86-64 wheel decodes the same clips here
# natively (the ratio is not a figure for a real Arm core: benches/RESULTS.md says what is).
#
# Needs root, debootstrap, qemu-user-static and binfmt-support, ../shared beside the repository. The base system
# is made by debootstrap once and kept (a tarball in /var/cache/framefeed-ci, made afresh after 30 days: its
# second stage runs emulated and takes long); each run unpacks it into a fresh root (FRAMEFEED_ARM64_ROOT).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
SHARED=$(cd ../shared && pwd)
ROOT=${FRAMEFEED_ARM64_ROOT:-/var/tmp/framefeed-arm64}
CACHE=/var/cache/framefeed-ci
BASE=$CACHE/trixie-arm64-base.tar
WHEEL=$(ls "$REPO"/dist/framefeed-*manylinux_2_28_aarch64.whl)
. "$REPO/python/apt-archive.sh"
MIRROR=$(apt_archive_uri bookworm)
# The corpus: every clip but the damaged one (its frames are issue 60's tests') and the 9000-frame one (the
# reader's whole-range read would hold 8 GB), the rotated ones included.
VIDEOS=(sample)
shopt -s nullglob
for f in "$SHARED"/videos/*.mp4 "$SHARED"/videos/*.mkv "$SHARED"/videos/*.webm "$SHARED"/videos/*.mov \
  "$SHARED"/videos/*.avi "$SHARED"/videos/rotated/*; do
  name=${f#"$SHARED/videos/"}
  case $name in corrupted_* | long_*) continue ;; esac
  VIDEOS+=("$name")
done
shopt -u nullglob
MOUNTS=(proc dev src/shared)

. "$REPO/.ci/chroot.sh"
trap remove_root EXIT
remove_root

echo "== aarch64 binaries through qemu-user"
if [ ! -e /proc/sys/fs/binfmt_misc/status ]; then
  mount binfmt_misc -t binfmt_misc /proc/sys/fs/binfmt_misc
fi
update-binfmts --enable qemu-aarch64
# F: the interpreter is opened when registered, so that it runs inside the chroot, which has no qemu.
if ! grep -q '^flags:.*F' /proc/sys/fs/binfmt_misc/qemu-aarch64; then
  echo "aarch64.sh: qemu-aarch64 is registered without the F flag: $(cat /proc/sys/fs/binfmt_misc/qemu-aarch64)" >&2
  exit 1
fi

echo "== a clean Debian 13 arm64 system in $ROOT"
mkdir -p "$CACHE"
if [ ! -f "$BASE" ] || [ -n "$(find "$BASE" -mtime +30)" ]; then
  echo "debootstrap (its second stage emulated: tens of minutes), kept in $BASE"
  rm -rf "$ROOT.base"
  # debootstrap refuses a cache directory that does not exist (a new machine's first run).
  mkdir -p "$CACHE/debootstrap-trixie-arm64"
  debootstrap --arch=arm64 --variant=minbase --include=python3,python3-venv \
    --cache-dir="$CACHE/debootstrap-trixie-arm64" trixie "$ROOT.base" "$MIRROR" >/dev/null
  tar -C "$ROOT.base" -cf "$BASE.part" . && mv "$BASE.part" "$BASE"
  rm -rf "$ROOT.base"
fi
mkdir -p "$ROOT" && tar -C "$ROOT" -xf "$BASE"
# HTTPS from inside (pip): the host's CA bundle, which may hold a proxy's CA that Debian's does not.
cp /etc/ssl/certs/ca-certificates.crt "$ROOT/etc/host-ca.crt"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
mkdir -p "$ROOT/src/shared" "$ROOT/check"
mount -t proc proc "$ROOT/proc"
mount --bind /dev "$ROOT/dev"
mount --bind -o ro "$SHARED" "$ROOT/src/shared"
cp "$WHEEL" "$REPO/.ci/wheel_check.py" "$ROOT/check/"
in_root() {
  chroot "$ROOT" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    PIP_CERT=/etc/host-ca.crt SSL_CERT_FILE=/etc/host-ca.crt PIP_DISABLE_PIP_VERSION_CHECK=1 "$@"
}
in_root uname -m | grep -qx aarch64
in_root sh -c 'for t in ffmpeg cc gcc clang rustc cargo; do if command -v $t; then echo "$t is installed" >&2; exit 1; fi; done
  if ls /usr/lib/aarch64-linux-gnu/libavcodec.so* 2>/dev/null; then echo "libavcodec is installed" >&2; exit 1; fi'
in_root python3 --version

echo "== the wheel, pip-installed there, against this machine's ffmpeg"
python3 .ci/wheel_check.py reference "$ROOT/check/reference.json" "$SHARED/videos" "${VIDEOS[@]}"
in_root python3 -m venv /opt/venv
in_root /opt/venv/bin/pip install -q "/check/$(basename "$WHEEL")"
in_root /opt/venv/bin/python /check/wheel_check.py check --no-gpu /check/reference.json /src/shared/videos \
  "${VIDEOS[@]}" | tee "$ROOT/check/arm.txt"

X86=$(ls "$REPO"/dist/framefeed-*manylinux_2_28_x86_64.whl 2>/dev/null || true)
if [ -n "$X86" ]; then
  echo "== speed under emulation, a sanity check only: the x86-64 wheel on the same clips, natively"
  python3 -m venv "$ROOT/x86-venv"
  "$ROOT/x86-venv/bin/pip" install -q "$X86"
  (cd / && "$ROOT/x86-venv/bin/python" "$REPO/.ci/wheel_check.py" check "$ROOT/check/reference.json" \
    "$SHARED/videos" "${VIDEOS[@]}") | tee "$ROOT/check/x86.txt"
  arm=$(sed -n 's/^decode seconds: //p' "$ROOT/check/arm.txt")
  x86=$(sed -n 's/^decode seconds: //p' "$ROOT/check/x86.txt")
  echo "VideoInput over ${#VIDEOS[@]} clips: aarch64 wheel under qemu ${arm} s, x86-64 wheel natively ${x86} s" \
    "($(python3 -c "print(f'{$arm / $x86:.1f}')")x)"
fi
