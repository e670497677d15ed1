#!/usr/bin/env bash
# Every GPU check of the CUDA backend in one run, on a machine with an NVIDIA
# GPU, nvcc, and Python with torch and torchvision:
#
#   bench/cuda/gpu_check.sh OUT   # HYBGEN, EXPORT_ZOO: the binaries (default build/...)
#                                 # CHECK_SECONDS: the whole run's aim (default 480)
#
# 1. `hybgen verify --target cuda` on every zoo model at batch 1 (the eager
#    reference on the CPU), OUT/verify/NAME.txt;
# 2. bench_gemm_cublas: the GEMM against cuBLAS (FP32, TF32, FP16 on wgmma and
#    mma.sync), OUT/gemm.txt;
# 3. the tf32 convolution's two gathers (mma.sync, the default, and wmma with
#    HG_CUDA_WMMA_GATHER): `hybgen bench --target cuda --precision tf32` of
#    ResNet-18 at batch 32 both ways, OUT/gather.txt;
# 4. fp16 on Hopper's wgmma (the default on an sm_90a build): `hybgen verify
#    --precision fp16` of ResNet-18 at batch 32 and the transformer layer, and
#    `hybgen bench` of both on wgmma (TMA copies), on wgmma with cp.async
#    copies (-DHG_CUDA_NO_TMA) and on mma.sync (-DHG_CUDA_NO_WGMMA),
#    OUT/wgmma.txt; and ResNet-18 and the transformer layer at batch 1 in
#    fp16 verified with programmatic dependent launch (-DHG_CUDA_PDL) and
#    timed with and without it, OUT/pdl.txt;
# 5. gpu_bench.py: the generated code against PyTorch (eager, CUDA Graph,
#    torch.compile max-autotune while time is left), OUT/gpu_bench.txt and .json.
# Building (nvcc, the exports) runs in parallel first; the timings run one at
# a time afterwards, with nothing else on the GPU or the CPUs. torch.compile
# gets what is left of CHECK_SECONDS after the rest (gpu_bench.py
# --time-budget). A summary closes the output, also in OUT/summary.txt.
set -u
out=${1:?usage: gpu_check.sh OUT}
here=$(cd "$(dirname "$0")" && pwd)
hybgen=${HYBGEN:-build/hybgen}
zoo=${EXPORT_ZOO:-build/examples/export_zoo}
check_seconds=${CHECK_SECONDS:-480}
jobs=$(nproc)
for tool in "$hybgen" "$zoo"; do
  [ -x "$tool" ] || { echo "gpu_check.sh: $tool is not an executable (build hybgen and export_zoo first)" >&2; exit 2; }
done
command -v nvcc > /dev/null || { echo "gpu_check.sh: nvcc is not on the PATH" >&2; exit 2; }
mkdir -p "$out/verify" "$out/zoo"
rm -f "$out/verify/summary.txt"
start=$SECONDS
stage() { echo "[$((SECONDS - start)) s] $*"; }
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; nvcc --version | tail -2
  python3 -c "import torch, torchvision; print('torch', torch.__version__, 'torchvision', torchvision.__version__)"
  lscpu | grep 'Model name'; echo "cores: $jobs"; } > "$out/machine.txt" 2>&1

# 1. Verify the zoo, all models at once in the background (nvcc is mostly one thread each).
stage "building: verify the zoo, bench_gemm_cublas, gpu_bench.py --phase prepare ($jobs jobs)"
models=$("$zoo" --list | awk '{print $1}' | grep -v seed_mlp)
# One BLAS thread each: a dozen processes share the cores with the builds.
printf '%s\n' $models | OPENBLAS_NUM_THREADS=1 xargs -P 16 -I{} sh -c \
  "'$zoo' {} '$out/zoo/{}' > /dev/null 2>&1; timeout 300 '$hybgen' verify '$out/zoo/{}.json' --target cuda --external-weights --tolerance 1e-4 > '$out/verify/{}.txt' 2>&1; echo \"{}: exit \$?\" >> '$out/verify/summary.txt'" &
verify_pid=$!

# 2 and 3: build while the zoo verifies.
# A Hopper runs the FP16 GEMM's wgmma kernel only from sm_90a code.
gemm_arch=-arch=native
[ "$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1)" = "9.0" ] && gemm_arch=-arch=sm_90a
(cd "$here" && nvcc -O3 "$gemm_arch" -std=c++17 bench_gemm_cublas.cu -lcublas -o "$out/bench_gemm_cublas") \
  > "$out/gemm_build.txt" 2>&1 &
gemm_pid=$!
python3 "$here/gpu_bench.py" --phase prepare --out "$out" --hybgen "$hybgen" --export-zoo "$zoo" --jobs "$jobs" \
  > "$out/gpu_bench_prepare.txt" 2>&1
stage "gpu_bench.py prepared: $(tail -1 "$out/gpu_bench_prepare.txt")"
wait "$gemm_pid" "$verify_pid"
stage "built and verified"

# Timings, one at a time.
if [ -x "$out/bench_gemm_cublas" ]; then
  "$out/bench_gemm_cublas" > "$out/gemm.txt" 2>&1
else
  echo "bench_gemm_cublas did not build: see $out/gemm_build.txt" > "$out/gemm.txt"
fi
stage "GEMM timed"
"$zoo" resnet18_v1 "$out/zoo/resnet18_v1_b32" 32 > /dev/null 2>&1
for gather in mma wmma; do
  flags=""
  [ "$gather" = wmma ] && flags="-DHG_CUDA_WMMA_GATHER"
  echo "== tf32 convolution gather: $gather"
  timeout 300 "$hybgen" bench "$out/zoo/resnet18_v1_b32.json" --target cuda --precision tf32 --external-weights \
    --runs 50 --warmup 10 --cxx-flags "-O3 $flags" 2>&1 | grep -E "latency|error"
done > "$out/gather.txt" 2>&1
stage "tf32 gathers timed"
"$zoo" transformer_encoder "$out/zoo/transformer_encoder_b32" 32 > /dev/null 2>&1
# verify_fp16 MODEL [FLAGS], bench_fp16 MODEL RUNS [FLAGS]: MODEL's export in fp16.
verify_fp16() {
  timeout 300 "$hybgen" verify "$out/zoo/$1.json" --target cuda --precision fp16 --external-weights \
    --cxx-flags "${2:-}" 2>&1 | grep -E "reference$|^verify:|error" | tail -2
}
bench_fp16() {
  timeout 300 "$hybgen" bench "$out/zoo/$1.json" --target cuda --precision fp16 --external-weights \
    --runs "$2" --warmup 10 --cxx-flags "-O3 ${3:-}" 2>&1 | grep -E "latency|error"
}
for model in resnet18_v1_b32 transformer_encoder_b32; do
  echo "== fp16 $model: verify (wgmma on a Hopper)"
  verify_fp16 "$model"
  for kernel in wgmma wgmma-cp.async mma.sync; do
    flags=""
    [ "$kernel" = wgmma-cp.async ] && flags="-DHG_CUDA_NO_TMA"
    [ "$kernel" = mma.sync ] && flags="-DHG_CUDA_NO_WGMMA"
    echo "== fp16 $model on $kernel"
    bench_fp16 "$model" 50 "$flags"
  done
done > "$out/wgmma.txt" 2>&1
stage "fp16 wgmma and mma.sync verified and timed"
# Programmatic dependent launch at batch 1 (fp16: its sm_90a code has the waits).
for model in resnet18_v1 transformer_encoder; do
  echo "== fp16 $model batch 1: verify with -DHG_CUDA_PDL"
  verify_fp16 "$model" -DHG_CUDA_PDL
  for flags in "" "-DHG_CUDA_PDL"; do
    echo "== fp16 $model batch 1 ${flags:-(plain launches)}"
    bench_fp16 "$model" 200 "$flags"
  done
done > "$out/pdl.txt" 2>&1
stage "programmatic dependent launch verified and timed"
budget=$((check_seconds - (SECONDS - start)))
[ "$budget" -lt 60 ] && budget=60
PYTHONUNBUFFERED=1 python3 "$here/gpu_bench.py" --phase measure --out "$out" --time-budget "$budget" \
  > "$out/gpu_bench.txt" 2>&1
stage "gpu_bench.py measured (exit $?, time budget $budget s)"

summary() {
  echo "===== machine"; cat "$out/machine.txt"
  echo "===== verify (exit 0: within 1e-4 of the CPU reference)"
  sort "$out/verify/summary.txt" 2>/dev/null
  for f in "$out"/verify/*.txt; do
    case "$f" in */summary.txt) ;; *) grep -h -E "reference$|^verify:|error" "$f" | tail -3 |
                                       sed "s|^|  $(basename "$f" .txt): |" ;; esac
  done
  echo "===== GEMM"; cat "$out/gemm.txt"
  echo "===== tf32 convolution gathers (ResNet-18, batch 32)"; cat "$out/gather.txt"
  echo "===== fp16: wgmma against mma.sync (batch 32)"; cat "$out/wgmma.txt"
  echo "===== fp16 batch 1: programmatic dependent launch"; cat "$out/pdl.txt"
  echo "===== models"; cat "$out/gpu_bench_prepare.txt" "$out/gpu_bench.txt"
}
summary 2>&1 | tee "$out/summary.txt"
stage "done"
