#!/usr/bin/env python3
"""hybgen's generated CUDA against PyTorch on the same GPU: same model, same weights, same input.

    gpu_bench.py --out OUT [--hybgen build/hybgen] [--export-zoo build/examples/export_zoo]
                 [--configs resnet18_v1:1,resnet18_v1:32,...] [--compile-mode reduce-overhead]
                 [--compile-configs resnet18_v1:1,transformer_encoder:1] [--runs 100]

For each config NAME:BATCH it exports the zoo model with export_zoo (Xavier
seed 42), generates its CUDA with `hybgen --target cuda --external-weights`,
converts the same model to ONNX (bench/peers/to_onnx.py) and then to a
torch.nn.Module (onnx2torch), and builds the generated code with a small
extern "C" shim into a shared library (nvcc, for this GPU only, all configs
at once). Then, in one process and on one stream: both run on the same N(0, 1)
input (their outputs are compared: the largest difference relative to the
largest magnitude), and each is timed by CUDA events around one call,
median of --runs after warm-up: hybgen's run(), its captured CUDA Graph
replayed, PyTorch eager (TF32 off: FP32 like hybgen's default kernels), and
torch.compile(mode=--compile-mode) for the --compile-configs (compilation
takes minutes per model). Results go to OUT/gpu_bench.json and a table to
stdout. Needs nvcc, torch, onnx and onnx2torch; nothing here is part of
hybgen.
"""
import argparse
import concurrent.futures
import ctypes
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SHIM = """#include "{name}.h"
extern "C" {{
int hg_model_bytes() {{ return static_cast<int>(sizeof({name}::Model)); }}
int hg_init(void* model, const void* weights) {{ return {name}::init(static_cast<{name}::Model*>(model), weights); }}
int hg_run(const void* model, const float* in, float* out, void* stream) {{
  return {name}::run(static_cast<const {name}::Model*>(model), in, out, static_cast<cudaStream_t>(stream));
}}
int hg_capture(void* model, const float* in, float* out, void* stream) {{
  return {name}::capture(static_cast<{name}::Model*>(model), in, out, static_cast<cudaStream_t>(stream));
}}
int hg_replay(const void* model, void* stream) {{
  return {name}::replay(static_cast<const {name}::Model*>(model), static_cast<cudaStream_t>(stream));
}}
void hg_release(void* model) {{ {name}::release(static_cast<{name}::Model*>(model)); }}
}}
"""


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed:\n{r.stdout}\n{r.stderr}")
    return r.stdout


def prepare(cfg, args, work: Path):
    """Export, generate, convert and build one config; returns what the timing needs."""
    name, batch = cfg.split(":")
    stem = f"{name}_b{batch}".replace("-", "_")
    t0 = time.time()
    run([args.export_zoo, name, str(work / stem), batch])
    gen = work / (stem + "_cuda")
    run([args.hybgen, str(work / f"{stem}.json"), "--target", "cuda", "--external-weights", "--name", stem, "-o", str(gen)])
    run([sys.executable, str(HERE.parent / "peers" / "to_onnx.py"), str(work / f"{stem}.json"), str(work / f"{stem}.onnx"),
         "--hybgen", args.hybgen])
    (gen / "shim.cu").write_text(SHIM.format(name=stem))
    run(["nvcc", "-std=c++17", "-O3", f"-arch={args.arch}", "-shared", "-Xcompiler", "-fPIC", "-I", str(gen),
         str(gen / "shim.cu"), str(gen / f"{stem}.cu"), "-o", str(gen / f"lib{stem}.so")])
    manifest = json.loads((gen / f"{stem}.manifest.json").read_text())
    return {"config": cfg, "stem": stem, "lib": str(gen / f"lib{stem}.so"), "weights": str(gen / f"{stem}.weights.bin"),
            "onnx": str(work / f"{stem}.onnx"), "input": manifest["inputs"][0]["shape"],
            "output": manifest["outputs"][0]["shape"], "kernels": len(manifest["kernels"]),
            "prepare_seconds": round(time.time() - t0, 1)}


def timed(torch, call, runs, warmup):
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


def measure(p, args, torch, onnx, onnx2torch):
    lib = ctypes.CDLL(p["lib"])
    lib.hg_init.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.hg_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    lib.hg_capture.argtypes = lib.hg_run.argtypes
    lib.hg_replay.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.hg_release.argtypes = [ctypes.c_void_p]
    model_bytes = ctypes.create_string_buffer(lib.hg_model_bytes())
    model = ctypes.addressof(model_bytes)
    weights = np.fromfile(p["weights"], dtype=np.uint8)
    status = lib.hg_init(model, weights.ctypes.data)
    if status != 0:
        raise RuntimeError(f"{p['stem']}: init() returned {status}")
    torch.manual_seed(7)
    x = torch.randn(*p["input"], device="cuda")
    y = torch.empty(*p["output"], device="cuda")
    # Not the legacy default stream, which CUDA cannot capture into a graph.
    stream = torch.cuda.current_stream().cuda_stream

    def hybgen_run():
        if lib.hg_run(model, x.data_ptr(), y.data_ptr(), stream) != 0:
            raise RuntimeError(f"{p['stem']}: run() failed")

    hybgen_run()
    torch.cuda.synchronize()
    ours = y.cpu().numpy().ravel().copy()
    module = onnx2torch.convert(onnx.load(p["onnx"])).eval().cuda()
    r = dict(p)
    with torch.inference_mode():
        theirs = module(x).float().cpu().numpy().ravel()
        r["max_rel_diff"] = float(np.max(np.abs(ours - theirs)) / max(float(np.max(np.abs(theirs))), 1e-30))
        r["hybgen_run_us"] = timed(torch, hybgen_run, args.runs, args.warmup)
        if lib.hg_capture(model, x.data_ptr(), y.data_ptr(), stream) != 0:
            raise RuntimeError(f"{p['stem']}: capture() failed")
        r["hybgen_graph_us"] = timed(torch, lambda: lib.hg_replay(model, stream), args.runs, args.warmup)
        r["torch_eager_us"] = timed(torch, lambda: module(x), args.runs, args.warmup)
        if p["config"] in args.compile_configs.split(","):
            try:
                compiled = torch.compile(module, mode=args.compile_mode)
                t0 = time.time()
                for _ in range(3):
                    compiled(x)
                torch.cuda.synchronize()
                r["torch_compile_seconds"] = round(time.time() - t0, 1)
                r["torch_compile_mode"] = args.compile_mode
                r["torch_compiled_us"] = timed(torch, lambda: compiled(x), args.runs, args.warmup)
            except Exception as e:  # onnx2torch modules that dynamo cannot trace
                r["torch_compile_error"] = str(e).splitlines()[0][:200]
    lib.hg_release(model)
    return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--hybgen", default="build/hybgen")
    ap.add_argument("--export-zoo", default="build/examples/export_zoo")
    ap.add_argument("--configs", default="resnet18_v1:1,resnet18_v1:32,mobilenet_v2:1,mobilenet_v2:32,"
                                         "transformer_encoder:1,transformer_encoder:32")
    ap.add_argument("--compile-configs", default="resnet18_v1:1,transformer_encoder:1")
    ap.add_argument("--compile-mode", default="reduce-overhead")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    ap.add_argument("--arch", default="native", help="nvcc -arch for the shared libraries (default: this GPU's)")
    ap.add_argument("--phase", choices=["all", "prepare", "measure"], default="all",
                    help="prepare: export, generate and build only (CPU); measure: time what prepare left in OUT")
    args = ap.parse_args()
    out = Path(args.out)
    work = out / "work"
    work.mkdir(parents=True, exist_ok=True)
    if args.phase == "measure":
        prepared = json.loads((work / "prepared.json").read_text())
    else:
        prepared = prepare_all(args, work)
        (work / "prepared.json").write_text(json.dumps(prepared, indent=2))
        if args.phase == "prepare":
            return 0
    return measure_all(prepared, args, out)


def prepare_all(args, work):
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(prepare, c, args, work): c for c in args.configs.split(",")}
        prepared = []
        for f in concurrent.futures.as_completed(futures):
            try:
                prepared.append(f.result())
                print(f"prepared {futures[f]} in {prepared[-1]['prepare_seconds']} s", flush=True)
            except Exception as e:  # one config failing leaves the others
                print(f"FAILED to prepare {futures[f]}: {e}", flush=True)
    prepared.sort(key=lambda p: args.configs.split(",").index(p["config"]))
    return prepared


def measure_all(prepared, args, out):
    import onnx
    import onnx2torch
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    results = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "configs": []}
    print(f"{'config':26} {'kernels':>7} {'hybgen run':>11} {'hybgen graph':>13} {'torch eager':>12} "
          f"{'torch.compile':>14} {'rel diff':>9}", flush=True)
    for p in prepared:
        try:
            with torch.cuda.stream(torch.cuda.Stream()):
                r = measure(p, args, torch, onnx, onnx2torch)
        except Exception as e:
            print(f"FAILED {p['config']}: {e}", flush=True)
            continue
        results["configs"].append(r)
        compiled = f"{r['torch_compiled_us']:.1f}" if "torch_compiled_us" in r else "-"
        print(f"{r['config']:26} {r['kernels']:7d} {r['hybgen_run_us']:11.1f} {r['hybgen_graph_us']:13.1f} "
              f"{r['torch_eager_us']:12.1f} {compiled:>14} {r['max_rel_diff']:9.1e}", flush=True)
        (out / "gpu_bench.json").write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
