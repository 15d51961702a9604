#!/usr/bin/env bash
# Runs issue 5's GPU checks on a GPU machine from what benches/gpu-bundle.sh packed (no Rust or FFmpeg needed
# there). From the repository root, through the device tool:
#   bash benches/gpu-run.sh tests   (carry [".gpu", ".gpu-videos"]): what the machine has, then the GPU tests
#                                    with REQUIRE_GPU=1 (GPU vs CPU on the fixtures and the shared corpus,
#                                    fallback, drop mid-video)
#   bash benches/gpu-run.sh bench   (carry [".gpu", ".gpu-clips"]): benches/gpu.sh on 1080p and 4K H.264 and
#                                    HEVC, 1 / 7 / 14 operators against the bundled ffmpeg's -hwaccel cuda floor
#   bash benches/gpu-run.sh operators (carry [".gpu", ".gpu-clips"]): benches/gpu_operators.rs, 1 / 7 / 14
#                                    operators in one process sharing the GPU's context, on the same clips,
#                                    each NVDEC driver (hwaccel, direct) side by side, NVDEC use sampled
#   bash benches/gpu-run.sh sampling (carry [".gpu", ".gpu-clips"]): clip sampling on NVDEC against the same
#                                    clips on the CPU and the whole video on NVDEC (benches/gpu_sampling.py)
#   bash benches/gpu-run.sh clocks  the GPU's clocks (NVDEC's rate scales with the video clock)
#   bash benches/gpu-run.sh python  (carry [".gpu"]): the Python package's GPU tests (the wheel in .gpu/wheel,
#                                    built by gpu-bundle.sh) with the machine's own torch as the CUDA consumer
#   bash benches/gpu-run.sh card (carry [".gpu-card"], + ".gpu" for the Rust tests): the card checks in one run,
#                                    packed by benches/gpu-card-pack.sh: the self-contained wheel's NVDEC
#                                    against its CPU path (benches/gpu_wheel.py), the Rust GPU tests, cameras
#                                    per card (benches/mux_cameras.py with DEVICE=cuda)
# Logs go to $OUT (the device tool brings them back) or /tmp.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${OUT:-/tmp}
export LD_LIBRARY_PATH="$root/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$root/.gpu/bin:$PATH"

if [ "${1:-}" = card ] || [ "${1:-}" = issue64 ]; then
  # The card checks in one run (packed by benches/gpu-card-pack.sh; carry [".gpu-card"], plus ".gpu" for the Rust
  # GPU tests). Each part's log goes to $OUT as it runs, so a run cut short still brings back what it did.
  # CHECK_ON_CPU=1 (the pack script's --check): the same parts with the CPU in the GPU's place.
  pack=.gpu-card
  [ -d "$pack/wheel" ] || { echo "no $pack: run benches/gpu-card-pack.sh here and carry $pack" >&2; exit 2; }
  dev=cuda
  [ "${CHECK_ON_CPU:-0}" = 1 ] && dev=cpu
  py=${PYTHON:-python3}
  rc=0
  if [ "$dev" = cuda ]; then
    echo "== machine"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.video --format=csv,noheader
    "$py" --version
  fi
  echo "== the self-contained wheel, installed as a user would"
  site=/tmp/ffwheel
  rm -rf "$site"
  if ! PIP_ROOT_USER_ACTION=ignore "$py" -m pip install -q --no-index --no-deps --target "$site" "$pack"/wheel/*.whl; then
    echo "pip is not usable here: the wheel unpacked with zipfile instead (the same files)"
    "$py" -m zipfile -e "$pack"/wheel/*.whl "$site"
  fi
  export PYTHONPATH=$site
  "$py" -c "import framefeed as ff, numpy; print('framefeed from', ff.__file__, '; numpy', numpy.__version__); print('cuda_status', ff.cuda_status())"
  echo "== 1. NVDEC against the CPU through VideoInput and VideoReader (benches/gpu_wheel.py)"
  timeout "${WHEEL_TIMEOUT:-240}" "$py" benches/gpu_wheel.py "$pack/videos" --device "$dev" \
    --clip "$pack/clips/1080p_h264.mp4" 2>&1 | tee "$out/gpu_wheel.log"
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
  if [ "$dev" = cuda ]; then
    if [ -x .gpu/bin/gpu_backend ]; then
      echo "== 2. the Rust GPU tests (16-bit, tone mapping, rotation, resolution changes, sampling on NVDEC)"
      bash "$0" tests || rc=1
    else
      echo "== 2. the Rust GPU tests: not run (.gpu not carried: benches/gpu-bundle.sh packs it)"
    fi
  fi
  echo "== 3. cameras per card: 720p30 live cameras through Mux on $dev"
  if [ "$dev" = cuda ]; then
    cams=(env CLIPS="$pack/cams" SENDER=paced DEVICE=cuda START="${CAM_START:-96}" STEP="${CAM_STEP:-48}"
      MAX="${CAM_MAX:-480}")
  else
    cams=(env CLIPS="$pack/cams" SENDER=paced DEVICE=cpu CAPACITY=0)
  fi
  timeout "${CAM_TIMEOUT:-300}" "${cams[@]}" "$py" benches/mux_cameras.py "${CAMS:-2}" 20 2>&1 |
    tee "$out/gpu_cameras.log"
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
  exit "$rc"
fi

[ -x .gpu/bin/framefeed ] || { echo "no .gpu/bin/framefeed: run benches/gpu-bundle.sh here and carry .gpu" >&2; exit 2; }

echo "== machine"
nvidia-smi -L
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
for lib in libcuda.so.1 libnvcuvid.so.1; do
  found=$(ldconfig -p | awk -v l="$lib" '$1 == l {print $NF; exit}')
  echo "$lib: ${found:-not in ld.so.cache ($(ls /usr/local/nvidia/lib64/$lib 2>/dev/null || echo absent))}"
done
uname -r
ldd .gpu/bin/framefeed | grep -E "not found" && echo "missing libraries above" >&2

case "${1:-tests}" in
tests)
  # The test binary was built in /work/main: its fixtures and ../shared/videos paths are compiled in.
  [ -e /work/main/tests/fixtures ] || { mkdir -p /work && ln -sfn "$root" /work/main; }
  [ -e /work/shared/videos/MANIFEST.json ] || { mkdir -p /work/shared && ln -sfn "$root/.gpu-videos" /work/shared/videos; }
  echo "== framefeed on the built-in sample, NVDEC"
  framefeed run --device cuda --json -L 8 -B 2 | head -c 600
  echo
  echo "== GPU tests (REQUIRE_GPU=1)"
  REQUIRE_GPU=1 .gpu/bin/gpu_backend --test-threads 1 --nocapture 2>&1 | tee "$out/gpu_tests.log"
  rc=${PIPESTATUS[0]}
  echo "== unit tests on the GPU (REQUIRE_GPU=1): NVDEC seeking"
  REQUIRE_GPU=1 .gpu/bin/unit_tests on_nvdec --nocapture 2>&1 | tee "$out/gpu_unit_tests.log"
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
  exit "$rc"
  ;;
bench)
  bash benches/gpu.sh .gpu/bin/framefeed .gpu-clips/1080p_h264.mp4 .gpu-clips/1080p_hevc.mp4 \
    .gpu-clips/4k_h264.mp4 .gpu-clips/4k_hevc.mp4 2>&1 | tee "$out/gpu_bench.log"
  ;;
python)
  python3 -m pip install -q --no-index --no-deps --target /tmp/ffpy .gpu/wheel/*.whl || exit 1
  [ -e /work/main/tests/fixtures ] || { mkdir -p /work && ln -sfn "$root" /work/main; }
  PYTHONPATH=/tmp/ffpy python3 -m pytest -q -p no:cacheprovider --rootdir /tmp python/tests/test_gpu.py -rs 2>&1 |
    tee "$out/gpu_python.log"
  exit "${PIPESTATUS[0]}"
  ;;
sampling)
  # Clip sampling on NVDEC (seeking) against the same clips on the CPU and the whole video on NVDEC.
  python3 benches/gpu_sampling.py .gpu/bin/framefeed .gpu-clips/1080p_h264.mp4 .gpu-clips/1080p_hevc.mp4 \
    .gpu-clips/4k_h264.mp4 .gpu-clips/4k_hevc.mp4 2>&1 | tee "$out/gpu_sampling.log"
  ;;
clocks)
  # The video clock that NVDEC's per-engine rates scale with.
  nvidia-smi -q -d CLOCK | tee "$out/gpu_clocks.log"
  ;;
operators)
  nvidia-smi dmon -s um -o T -d 1 >"$out/gpu_operators_dmon.log" 2>&1 &
  dmon=$!
  trap 'kill $dmon 2>/dev/null || true' EXIT
  for clip in .gpu-clips/1080p_h264.mp4 .gpu-clips/1080p_hevc.mp4 .gpu-clips/4k_h264.mp4 .gpu-clips/4k_hevc.mp4; do
    .gpu/bin/gpu_operators "$clip" 1 7 14
  done 2>&1 | tee "$out/gpu_operators.log"
  ;;
*)
  echo "usage: bash benches/gpu-run.sh tests|bench|operators|sampling|clocks|python" >&2
  exit 2
  ;;
esac
