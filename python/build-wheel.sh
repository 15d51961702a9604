#!/usr/bin/env bash
# Builds framefeed's self-contained wheel into dist/: a wheel that needs nothing on the machine but glibc 2.28 or
# newer (manylinux_2_28: RHEL/Rocky/Alma 8, Debian 10, Ubuntu 18.10 and everything since).
#
#   python/build-wheel.sh            the x86-64 wheel (manylinux_2_28_x86_64)
#   python/build-wheel.sh aarch64    the Arm wheel (manylinux_2_28_aarch64: GH200/GB200, GB10, Graviton, Ampere),
#                                    cross-built on this x86-64 machine
#
# It builds, from the sources Debian 12's archive serves (`apt-get source`, checked against the archive's signed
# index), the parts of FFmpeg framefeed uses and dav1d (FFmpeg's AV1 decoder of choice), as static libraries, and
# links them into framefeed._framefeed with NVDEC (loaded at run time, as always). Only decoders, demuxers,
# parsers, bitstream filters, swscale, swresample and FFmpeg's own network protocols (http, tcp, udp, rtp, rtsp, rtmp, hls):
# no encoders, no filters, no devices, nothing autodetected (no X11, VA-API, zlib, TLS or GPU runtime libraries),
# no GPL or non-free part, so the whole is LGPL 2.1+ (FFmpeg) with BSD-2 (dav1d) and MIT/Apache-2.0 (framefeed).
# Each architecture's own assembly is in: x86's (nasm), or Arm's NEON (FFmpeg's and dav1d's).
#
# C is compiled and linked with zig (from PyPI) for glibc 2.28, so the wheel runs on machines older than this one
# without an old chroot (no Debian release old enough to give glibc 2.28 is still served here), and the Arm one
# without a cross toolchain.
#
# Needs (a fresh Debian 12: `apt-get install -y nasm dpkg-dev python3-venv gcc make pkg-config`, and the Rust
# toolchain): apt-get source and dpkg-source, nasm, a C compiler for dav1d, make, pkg-config, python3-venv.
# The Arm wheel needs as well Debian 12's `rustc-web` with its Arm standard library, and the Arm C library's
# headers for bindgen (`dpkg --add-architecture arm64 && apt-get update && apt-get install -y rustc-web
# libstd-rust-web-dev:arm64 libc6-dev:arm64`): a rustc at least as new as the crate's rust-version with an aarch64
# std, which Debian's archive serves where rustup's targets may not be reachable. It compiles the Arm module only
# (cargo stays rustup's), in a target folder of its own.
# Everything else (zig, meson, ninja, maturin, auditwheel) goes into a venv under the work folder, whose bin/ leads
# the PATH here, so that meson finds its ninja. The sources come from the Debian archive the machine's own apt
# sources name (python/apt-archive.sh), a mirror included.
#
# The C libraries built are kept outside the clone (FRAMEFEED_WHEEL_CACHE, by default ~/.cache/framefeed-wheel),
# in one folder per architecture named by a hash of their recipe (the sources' versions, the configure lines,
# zig's version): a rebuild, or CI's next fresh clone on the same machine, reuses them; a new FFmpeg point release
# or a changed configure line builds afresh and removes that architecture's older folder. Cargo's target folder
# for each architecture's wheel is kept there too (cargo-ARCH).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
ARCH=${1:-x86_64}
case $ARCH in
  x86_64 | aarch64) ;;
  *)
    echo "usage: python/build-wheel.sh [x86_64|aarch64] (got '$ARCH')" >&2
    exit 2
    ;;
esac
WORK=${FRAMEFEED_WHEEL_WORK:-$REPO/target/wheel}
CACHE=${FRAMEFEED_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/framefeed-wheel}
DIST=$REPO/dist
SUITE=bookworm
FFMPEG_CONFIGURE=(
  --disable-shared --enable-static --enable-pic
  --disable-programs --disable-doc --disable-autodetect --disable-everything
  --disable-avdevice --disable-avfilter --disable-postproc
  --enable-network --enable-libdav1d
  --enable-decoder=h264,hevc,vp8,vp9,libdav1d,mpeg4,mpeg2video,mpeg1video,h263,mjpeg,prores,dnxhd,theora,vc1
  --enable-decoder=wmv1,wmv2,wmv3,msmpeg4v1,msmpeg4v2,msmpeg4v3,rawvideo,ffv1
  # Audio decoders for the audio beside the frames (`Config::audio`, resampled by libswresample, built too).
  --enable-decoder=aac,aac_latm,mp3float,mp2float,vorbis,opus,ac3,eac3,flac,alac,'pcm*'
  --enable-demuxers --enable-parsers --enable-bsfs
  --enable-protocol=file,http,tcp,udp,rtp,hls,crypto,rtmp
)
DAV1D_OPTIONS=(--buildtype=release --default-library=static -Denable_tools=false -Denable_tests=false
  -Denable_examples=false)

# The Arm module's compiler (see above), checked before anything is built.
ARM_RUSTC=${FRAMEFEED_AARCH64_RUSTC:-/usr/bin/rustc}
if [ "$ARCH" = aarch64 ]; then
  RUST_VERSION=$(sed -n 's/^rust-version = "\(.*\)"$/\1/p' "$REPO/Cargo.toml")
  ARM_STD=$("$ARM_RUSTC" --print target-libdir --target aarch64-unknown-linux-gnu 2>/dev/null || true)
  if [ -z "$ARM_STD" ] || ! ls "$ARM_STD"/libstd-*.rlib >/dev/null 2>&1 ||
    [ ! -f /usr/include/aarch64-linux-gnu/bits/libc-header-start.h ]; then
    echo "build-wheel.sh: the Arm wheel needs a rustc with the aarch64 standard library at $ARM_RUSTC and the" \
      "aarch64 C library's headers (on Debian 12:" \
      "dpkg --add-architecture arm64 && apt-get update && apt-get install -y rustc-web libstd-rust-web-dev:arm64 libc6-dev:arm64;" \
      "or set FRAMEFEED_AARCH64_RUSTC)" >&2
    exit 1
  fi
  HAVE=$("$ARM_RUSTC" --version | awk '{print $2}')
  if [ "$(printf '%s\n%s\n' "$RUST_VERSION" "$HAVE" | sort -V | head -n1)" != "$RUST_VERSION" ]; then
    echo "build-wheel.sh: $ARM_RUSTC is rustc $HAVE; the crate needs $RUST_VERSION or newer" >&2
    exit 1
  fi
fi

mkdir -p "$WORK" "$DIST" "$CACHE"
TOOLS=$WORK/tools
[ -x "$TOOLS/bin/pip" ] || python3 -m venv "$TOOLS"
# Already satisfied (a kept work folder), pip changes nothing and asks no registry; an older maturin is replaced
# (1.9.3 is the first to write the licence files and expression the check below wants).
"$TOOLS/bin/pip" install -q 'ziglang>=0.13' 'maturin>=1.9.3,<2' 'meson>=1.3' ninja auditwheel
# The tools installed here come first (meson looks for ninja on the PATH).
export PATH="$TOOLS/bin:$PATH"
ZIG=$("$TOOLS/bin/python" -c 'import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')

# The compiler and archiver for the C libraries (and the Arm module's linker): zig, for glibc 2.28.
# Preprocess-only runs (configure's and meson's probes) take the plain triple, which zig's preprocessor accepts.
# A crate's C (ring's, for rustls) comes with cc-rs's `--target=aarch64-unknown-linux-gnu`, a triple zig cannot
# read: left out, the wrapper's own target stands.
BIN=$WORK/bin-$ARCH
mkdir -p "$BIN"
for tool in cc c++; do
  cat >"$BIN/z$tool" <<EOF
#!/bin/sh
triple=$ARCH-linux-gnu.2.28
for a in "\$@"; do [ "\$a" = -E ] && triple=$ARCH-linux-gnu; done
for a in "\$@"; do shift; case "\$a" in --target=*) ;; *) set -- "\$@" "\$a" ;; esac; done
exec "$ZIG" $tool -target "\$triple" -fno-sanitize=all "\$@"
EOF
done
for tool in ar ranlib; do printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$ZIG" "$tool" >"$BIN/z$tool"; done
chmod +x "$BIN"/z*

# The sources, from Debian 12's archive through a private apt state (the machine's own is left alone), at the
# address the machine's apt sources give it.
. "$REPO/python/apt-archive.sh"
SRC=$WORK/src
APT=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$SRC/apt/parts" -o "Dir::State::Lists=$SRC/apt/lists"
  -o "Dir::Cache=$SRC/apt/cache" -o "APT::Sandbox::User=root")
if [ ! -d "$SRC/ffmpeg" ] || [ ! -d "$SRC/dav1d" ]; then
  ARCHIVE=$(apt_archive_uri "$SUITE")
  rm -rf "$SRC" && mkdir -p "$SRC/apt/parts" "$SRC/apt/lists/partial" "$SRC/apt/cache"
  cat >"$SRC/apt/parts/src.sources" <<EOF
Types: deb-src
URIs: $ARCHIVE
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  # Security updates (FFmpeg's point releases come through them), where the machine's sources have them.
  if SECURITY=$(apt_archive_uri "$SUITE-security" 2>/dev/null); then
    cat >>"$SRC/apt/parts/src.sources" <<EOF

Types: deb-src
URIs: $SECURITY
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  else
    echo "build-wheel.sh: the machine's apt sources have no $SUITE-security: FFmpeg from $SUITE-updates" >&2
  fi
  apt-get "${APT[@]}" -q update
  (cd "$SRC" && apt-get "${APT[@]}" -q source --download-only ffmpeg dav1d)
  (cd "$SRC" && dpkg-source -x ffmpeg_*.dsc ffmpeg >/dev/null && dpkg-source -x dav1d_*.dsc dav1d >/dev/null)
fi
FFMPEG_VERSION=$(cd "$SRC" && ls ffmpeg_*.dsc | sed 's/^ffmpeg_\(.*\)\.dsc$/\1/')
DAV1D_VERSION=$(cd "$SRC" && ls dav1d_*.dsc | sed 's/^dav1d_\(.*\)\.dsc$/\1/')

# How each architecture's C libraries are built: FFmpeg's configure is told the target when it is not this
# machine. dav1d is compiled by the system's gcc for x86-64 (its C decodes AV1 about 15% faster than zig's clang
# makes it: 0.66-0.70 against 0.76-0.83 s for the same clip with dav1d's own tool) and linked by zig like the
# rest; it calls nothing glibc 2.28 lacks, which the check of the module's undefined symbols below would catch.
# For Arm (no Arm gcc here) zig compiles it, meson seeing an aarch64 host so that its NEON assembly is in.
case $ARCH in
  x86_64)
    FFMPEG_CROSS=()
    DAV1D_CROSS=()
    DAV1D_ENV=(CC=gcc AR=ar)
    ;;
  aarch64)
    FFMPEG_CROSS=(--enable-cross-compile --arch=aarch64 --target-os=linux)
    DAV1D_CROSS=(--cross-file "$BIN/meson-cross.ini")
    DAV1D_ENV=()
    cat >"$BIN/meson-cross.ini" <<EOF
[binaries]
c = '$BIN/zcc'
cpp = '$BIN/zc++'
ar = '$BIN/zar'
strip = 'true'

[host_machine]
system = 'linux'
cpu_family = 'aarch64'
cpu = 'armv8-a'
endian = 'little'
EOF
    ;;
esac
# The recipe, whose hash names the libraries' folder in the cache (the cross file's paths left out: they name
# this clone).
RECIPE=$(printf '%s\n' "framefeed wheel C libraries, recipe 2" "$ARCH" "ffmpeg $FFMPEG_VERSION" \
  "dav1d $DAV1D_VERSION" "zig $("$ZIG" version)" "${DAV1D_ENV[@]}" "${FFMPEG_CROSS[@]}" "${FFMPEG_CONFIGURE[@]}" \
  "${DAV1D_OPTIONS[@]}")
PREFIX=$CACHE/$ARCH-$(printf '%s' "$RECIPE" | sha256sum | cut -c1-16)
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
if [ ! -f "$PREFIX/.complete" ]; then
  echo "build-wheel.sh: building FFmpeg $FFMPEG_VERSION and dav1d $DAV1D_VERSION for $ARCH into $PREFIX"
  BUILD=$WORK/build-$ARCH
  rm -rf "$PREFIX" "$BUILD" && mkdir -p "$PREFIX" "$BUILD/ffmpeg"
  (cd "$SRC/dav1d" && env "${DAV1D_ENV[@]}" "$TOOLS/bin/meson" setup "$BUILD/dav1d" --prefix="$PREFIX" \
    --libdir=lib "${DAV1D_CROSS[@]}" "${DAV1D_OPTIONS[@]}" >"$BUILD/dav1d-setup.log" &&
    "$TOOLS/bin/ninja" -C "$BUILD/dav1d" install >"$BUILD/dav1d-build.log")
  (
    # Out of the source tree, so that both architectures build from one pristine copy.
    cd "$BUILD/ffmpeg"
    "$SRC/ffmpeg/configure" --prefix="$PREFIX" "${FFMPEG_CROSS[@]}" --cc="$BIN/zcc" --cxx="$BIN/zc++" \
      --ar="$BIN/zar" --ranlib="$BIN/zranlib" --pkg-config-flags=--static "${FFMPEG_CONFIGURE[@]}" \
      >"$BUILD/ffmpeg-configure.log"
    # zig links sysctl() from glibc 2.28 but carries no <sys/sysctl.h> (glibc 2.32 removed it); FFmpeg only
    # uses it on BSD and macOS, for the CPU count.
    sed -i 's/^#define HAVE_SYSCTL 1$/#define HAVE_SYSCTL 0/' config.h
    make -j"$(nproc)" >"$BUILD/ffmpeg-make.log" && make install >/dev/null
    # The configure line FFMPEG.txt quotes, kept with the libraries.
    sed -n 's/^#define FFMPEG_CONFIGURATION "\(.*\)"$/\1/p' config.h >"$PREFIX/ffmpeg-configuration.txt"
  )
  printf '%s\n' "$RECIPE" >"$PREFIX/recipe.txt"
  touch "$PREFIX/.complete"
  rm -rf "$BUILD"
  # This architecture's older builds (another FFmpeg release, another configure line) go.
  for old in "$CACHE/$ARCH"-*; do
    if [ "$old" != "$PREFIX" ]; then rm -rf "$old"; fi
  done
else
  echo "build-wheel.sh: FFmpeg $FFMPEG_VERSION and dav1d $DAV1D_VERSION for $ARCH, built before: $PREFIX"
fi
if grep -q -- '--enable-gpl\|--enable-nonfree' "$PREFIX/lib/pkgconfig/libavcodec.pc" \
  "$PREFIX/ffmpeg-configuration.txt"; then
  echo "build-wheel.sh: FFmpeg was configured with GPL or non-free parts" >&2
  exit 1
fi

# What the wheel carries about the FFmpeg inside it: release, configure line and licences (framefeed/_vendor/,
# written here and removed after the build so that the source tree stays clean). framefeed's own licences and
# THIRD-PARTY-NOTICES.md (FFmpeg's and dav1d's terms, the relinking note, the Rust crates) come with every build
# of the package, as pyproject.toml's `license-files` (in the wheel's .dist-info/licenses/).
VENDOR=$REPO/python/framefeed/_vendor
rm -rf "$VENDOR" && mkdir -p "$VENDOR"
trap 'rm -rf "$VENDOR"' EXIT
cat >"$VENDOR/FFMPEG.txt" <<EOF
This wheel ($ARCH) carries FFmpeg $FFMPEG_VERSION and dav1d $DAV1D_VERSION, linked statically into
framefeed._framefeed.

Sources: Debian 12 ("$SUITE") source packages ffmpeg $FFMPEG_VERSION and dav1d $DAV1D_VERSION, from
Debian's archive (apt-get source, checked against the archive's signed index; Debian's patches applied).
FFmpeg licence: LGPL version 2.1 or later (COPYING.LGPLv2.1; no GPL or non-free part is enabled).
dav1d licence: BSD 2-clause (dav1d-COPYING).
FFmpeg configure line:
$(cat "$PREFIX/ffmpeg-configuration.txt")

To relink with another FFmpeg (the LGPL's right), build framefeed from source: see the README's "Install" and
THIRD-PARTY-NOTICES.md (in this wheel's .dist-info/licenses/), which lists every licence of the module.
EOF
cp "$SRC/ffmpeg/COPYING.LGPLv2.1" "$VENDOR/COPYING.LGPLv2.1"
cp "$SRC/dav1d/COPYING" "$VENDOR/dav1d-COPYING"

# The module, linked by zig for glibc 2.28, FFmpeg static (pkg-config --static), NVDEC built in (loaded at run
# time).
rm -f "$DIST"/framefeed-*manylinux_2_28_"$ARCH".whl
# Cargo's output for the wheel is kept beside the C libraries, outside the clone, so that the next build (CI's
# next fresh clone) compiles only what changed; cargo's fingerprints decide that, as in any target folder.
export CARGO_TARGET_DIR=$CACHE/cargo-$ARCH
if [ "$ARCH" = x86_64 ]; then
  # Cargo does not see the static libraries change: the binding crate is always linked afresh.
  cargo clean -q --release --target x86_64-unknown-linux-gnu -p framefeed-python
  (cd python && maturin build --release --strip --zig --compatibility manylinux_2_28 \
    --features cuda,static-ffmpeg -o "$DIST")
else
  # Debian's rustc for the Arm target, zig as its linker and as the C compiler of crates with C in them, bindgen
  # reading FFmpeg's headers as the Arm target sees them, PyO3 building the stable ABI (abi3, Python 3.9 on)
  # without an Arm interpreter; warnings are errors (clippy runs on x86-64 only). Its target folder is its own
  # (above), so this compiler's artifacts never mix with rustup's.
  export RUSTC=$ARM_RUSTC RUSTFLAGS="-D warnings" \
    CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=$BIN/zcc CC_aarch64_unknown_linux_gnu=$BIN/zcc \
    CXX_aarch64_unknown_linux_gnu=$BIN/zc++ AR_aarch64_unknown_linux_gnu=$BIN/zar PKG_CONFIG_ALLOW_CROSS=1 \
    BINDGEN_EXTRA_CLANG_ARGS_aarch64_unknown_linux_gnu="--target=aarch64-linux-gnu -I$PREFIX/include" \
    PYO3_CROSS_PYTHON_VERSION=3.9
  cargo clean -q --release --target aarch64-unknown-linux-gnu -p framefeed-python
  (cd python && maturin build --release --strip --target aarch64-unknown-linux-gnu \
    --compatibility manylinux_2_28 --features cuda,static-ffmpeg -o "$DIST")
fi
WHEEL=$(ls "$DIST"/framefeed-*manylinux_2_28_"$ARCH".whl)
"$TOOLS/bin/auditwheel" show "$WHEEL"
# Every symbol the module takes from the system must carry a glibc version no newer than 2.28: an unversioned one
# (a function that glibc 2.28 lacks, left to be found at run time) would fail only when first called. (The
# Python C API is unversioned, from the interpreter.)
CHECK=$WORK/check && rm -rf "$CHECK" && mkdir -p "$CHECK" && (cd "$CHECK" && python3 -m zipfile -e "$WHEEL" .)
# The licences: framefeed's, the third-party notices, FFmpeg's and dav1d's texts, and the metadata's expression
# naming LGPL and BSD (python/pyproject.toml's `license`).
for file in "framefeed-*.dist-info/licenses/LICENSE-MIT" "framefeed-*.dist-info/licenses/LICENSE-APACHE" \
  "framefeed-*.dist-info/licenses/THIRD-PARTY-NOTICES.md" framefeed/_vendor/COPYING.LGPLv2.1 \
  framefeed/_vendor/dav1d-COPYING framefeed/_vendor/FFMPEG.txt; do
  # shellcheck disable=SC2086 # the dist-info folder's name is a glob
  if ! ls "$CHECK"/$file >/dev/null 2>&1; then
    echo "build-wheel.sh: the wheel lacks $file" >&2
    exit 1
  fi
done
if ! grep -q '^License-Expression: .*LGPL-2.1-or-later.*' "$CHECK"/framefeed-*.dist-info/METADATA ||
  ! grep -q '^License-Expression: .*BSD-2-Clause' "$CHECK"/framefeed-*.dist-info/METADATA; then
  echo "build-wheel.sh: the wheel's METADATA does not name FFmpeg's and dav1d's licences:" \
    "$(grep '^License' "$CHECK"/framefeed-*.dist-info/METADATA)" >&2
  exit 1
fi
UNVERSIONED=$(nm -D --undefined-only "$CHECK"/framefeed/_framefeed*.so | awk '$1 == "U" && $2 !~ /@/ && $2 !~ /^_?Py/ {print $2}')
NEWER=$(nm -D --undefined-only "$CHECK"/framefeed/_framefeed*.so | grep -o 'GLIBC_2\.[0-9]*' | sort -u -t. -k2,2n |
  awk -F. '$2 > 28')
if [ -n "$UNVERSIONED$NEWER" ]; then
  echo "build-wheel.sh: the module needs symbols glibc 2.28 lacks: $UNVERSIONED $NEWER" >&2
  exit 1
fi
SIZE=$(stat -c %s "$WHEEL")
echo "build-wheel.sh: $WHEEL ($((SIZE / 1024 / 1024)) MiB), FFmpeg $FFMPEG_VERSION, dav1d $DAV1D_VERSION"
if [ "$SIZE" -gt $((25 * 1024 * 1024)) ]; then
  echo "build-wheel.sh: the wheel is over 25 MiB" >&2
  exit 1
fi
