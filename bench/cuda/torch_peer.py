#!/usr/bin/env python3
"""PyTorch on the same GPU, same weights and input, as the peer of hybgen's CUDA code.

    torch_peer.py MODEL.onnx BUILD_DIR --shape 1,3,224,224 [--runs 50] [--compile MODE]

MODEL.onnx is the hybgen model converted by bench/peers/to_onnx.py (same
weights); BUILD_DIR a folder kept by `hybgen verify --target cuda --keep`,
whose in_0.bin is the input and out_0.bin hybgen's CUDA output for it. The
ONNX graph becomes a torch.nn.Module through onnx2torch, in eval mode on the
GPU under torch.inference_mode(). Each run is timed by CUDA events around one
call (launches included), medians of --runs after warm-up; with --compile,
torch.compile(mode=MODE) is timed the same way after its compilation (whose
seconds are printed). Prints one JSON object: the medians in microseconds and
the largest difference from hybgen's output relative to its largest
magnitude.
"""
import argparse
import json
import time

import numpy as np


def timed(torch, call, runs: int, warmup: int) -> float:
    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(runs):
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1000.0)
    return float(np.median(times))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("onnx")
    ap.add_argument("build_dir")
    ap.add_argument("--shape", required=True)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--compile", default="")
    args = ap.parse_args()

    import onnx
    import onnx2torch
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False  # FP32, as hybgen's default kernels
    torch.backends.cudnn.allow_tf32 = False
    shape = [int(d) for d in args.shape.split(",")]
    x = torch.from_numpy(np.fromfile(f"{args.build_dir}/in_0.bin", dtype=np.float32).reshape(shape)).cuda()
    expected = np.fromfile(f"{args.build_dir}/out_0.bin", dtype=np.float32)
    module = onnx2torch.convert(onnx.load(args.onnx)).eval().cuda()
    result = {"torch": torch.__version__, "device": torch.cuda.get_device_name(), "shape": shape}
    with torch.inference_mode():
        y = module(x)
        got = y.float().cpu().numpy().ravel()
        result["max_rel_diff_vs_hybgen"] = float(np.max(np.abs(got - expected)) / max(np.max(np.abs(expected)), 1e-30))
        result["eager_us"] = timed(torch, lambda: module(x), args.runs, args.warmup)
        if args.compile:
            compiled = torch.compile(module, mode=args.compile)
            t0 = time.time()
            compiled(x)
            compiled(x)
            torch.cuda.synchronize()
            result["compile_seconds"] = time.time() - t0
            result["compiled_mode"] = args.compile
            result["compiled_us"] = timed(torch, lambda: compiled(x), args.runs, args.warmup)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
