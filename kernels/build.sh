#!/usr/bin/env bash
# Regenerates kernels/convert.ptx from kernels/convert.cu with Debian's clang: no CUDA toolkit needed.
# sm_70 PTX is JIT-compiled by the driver for any newer GPU (Volta and later, Hopper included).
#   apt-get install -y clang && bash kernels/build.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-kernels/convert.ptx}
clang -x cuda --cuda-device-only --cuda-gpu-arch=sm_70 -nocudainc -nocudalib -O3 -S \
  kernels/convert.cu -o "$out"
