#!/usr/bin/env bash
# Every GPU check of the CUDA backend in one run, on a machine with an NVIDIA
# GPU, nvcc, and Python with torch, onnx and onnx2torch:
#
#   bench/cuda/gpu_check.sh OUT      # HYBGEN, EXPORT_ZOO: the binaries (default build/...)
#
# 1. `hybgen verify --target cuda` on every zoo model at batch 1 (the eager
#    reference on the CPU), OUT/verify/NAME.txt;
# 2. bench_gemm_cublas: the GEMM against cuBLAS, OUT/gemm.txt;
# 3. gpu_bench.py: the generated code against PyTorch eager and
#    torch.compile, OUT/gpu_bench.txt and .json.
# Building (nvcc, the exports) runs in parallel first; the timings run one at
# a time afterwards, with nothing else on the GPU.
set -u
out=${1:?usage: gpu_check.sh OUT}
here=$(cd "$(dirname "$0")" && pwd)
hybgen=${HYBGEN:-build/hybgen}
zoo=${EXPORT_ZOO:-build/examples/export_zoo}
jobs=$(nproc)
mkdir -p "$out/verify" "$out/zoo"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; nvcc --version | tail -2
  python3 -c "import torch; print('torch', torch.__version__)"; lscpu | grep 'Model name'; } > "$out/machine.txt" 2>&1

# 1. Verify the zoo (in the background, several at once).
models=$("$zoo" --list | awk '{print $1}' | grep -v seed_mlp)
printf '%s\n' $models | xargs -P 6 -I{} sh -c \
  "'$zoo' {} '$out/zoo/{}' > /dev/null 2>&1; timeout 420 '$hybgen' verify '$out/zoo/{}.json' --target cuda --external-weights --tolerance 1e-4 > '$out/verify/{}.txt' 2>&1; echo \"{}: exit \$?\" >> '$out/verify/summary.txt'" &
verify_pid=$!

# 2 and 3: build while the zoo verifies.
(cd "$here" && nvcc -O3 -arch=native -std=c++17 bench_gemm_cublas.cu -lcublas -o "$out/bench_gemm_cublas") \
  > "$out/gemm_build.txt" 2>&1 &
gemm_pid=$!
python3 "$here/gpu_bench.py" --phase prepare --out "$out" --hybgen "$hybgen" --export-zoo "$zoo" --jobs "$jobs" \
  > "$out/gpu_bench_prepare.txt" 2>&1
wait "$gemm_pid" "$verify_pid"

# Timings, one at a time.
[ -x "$out/bench_gemm_cublas" ] && "$out/bench_gemm_cublas" > "$out/gemm.txt" 2>&1
python3 "$here/gpu_bench.py" --phase measure --out "$out" > "$out/gpu_bench.txt" 2>&1
cat "$out/machine.txt" "$out/verify/summary.txt" "$out/gemm.txt" "$out/gpu_bench.txt" 2>/dev/null
