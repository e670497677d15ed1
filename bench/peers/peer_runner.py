#!/usr/bin/env python3
"""Time one peer runtime on one ONNX model, in this (fresh) process.

    peer_runner.py RUNNER MODEL.onnx [--runs N] [--warmup W] [--expected NAME=y.npy ...]
                   [--shape NAME=D1,D2,... ...]

RUNNER is one of
  onnxruntime   ONNX Runtime, CPU provider: intra_op_num_threads=1,
                inter_op_num_threads=1, sequential execution, graph
                optimizations ALL; inputs and outputs bound once (IOBinding),
                so a timed call is run_with_iobinding() alone.
  torch_eager   the ONNX model as a torch.nn.Module (onnx2torch), eval mode,
                torch.inference_mode(), torch.set_num_threads(1).
  torchscript   the same module traced (torch.jit.trace), frozen
                (torch.jit.freeze) and torch.jit.optimize_for_inference'd.

Every input gets the values `hybgen bench` feeds generated code: element k of
input i is ((k * 37 + i) % 101) / 50 - 1. After W warm-up calls it times N
single calls with time.perf_counter_ns and prints one JSON line: runner, min /
median / max microseconds, the Python timer's own cost (timer_us, the median of
an empty timed call), for onnxruntime the cost of the same call on a graph that
only copies the input (call_floor_us), versions, and with --expected the largest error
relative to the largest magnitude of each expected output.

--shape gives the shape of an input whose dimensions the model leaves
symbolic (a dynamic batch), as `hybgen --shape` does. Outputs with symbolic
dimensions are bound after a first call has shown their shape.

bench_peers.py starts one of these per runner and round; run it alone to
debug one peer. Thread pools are set here; OMP_NUM_THREADS, MKL_NUM_THREADS
and OPENBLAS_NUM_THREADS should be 1 in the environment as well.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np


def bench_input(shape, index: int) -> np.ndarray:
    k = np.arange(int(np.prod(shape)), dtype=np.int64)
    return (((k * 37 + index) % 101).astype(np.float32) / np.float32(50.0) - np.float32(1.0)).reshape(shape)


def parse_shapes(texts: list[str]) -> dict[str, list[int]]:
    """NAME=D1,D2,... (as `hybgen --shape`) -> {NAME: [D1, D2, ...]}."""
    shapes = {}
    for text in texts:
        name, sep, dims = text.partition("=")
        try:
            shape = [int(d) for d in dims.split(",")]
        except ValueError:
            shape = []
        if not sep or not name or not shape or min(shape) <= 0:
            raise SystemExit(f"--shape {text!r} must look like NAME=D1,D2,... (e.g. input=1,3,224,224)")
        shapes[name] = shape
    return shapes


def onnx_io(path: str, shapes: dict[str, list[int]] | None = None):
    """([(input, shape)], [(output, shape)]) of the model's runtime inputs and outputs: `shapes`
    gives inputs whose dims the model leaves symbolic; an output's unknown dim is 0."""
    import onnx

    m = onnx.load(path, load_external_data=False)
    init = {i.name for i in m.graph.initializer}

    def dims(vi):
        return [d.dim_value for d in vi.type.tensor_type.shape.dim]

    shapes = shapes or {}
    inputs = []
    for i in m.graph.input:
        if i.name in init:
            continue
        shape = shapes.get(i.name, dims(i) if i.type.tensor_type.HasField("shape") else None)
        if shape is None or any(d <= 0 for d in shape):
            raise SystemExit(f"{path}: input {i.name!r} has dimensions the model leaves open "
                             f"({[d.dim_value or d.dim_param or '?' for d in i.type.tensor_type.shape.dim]}): "
                             f"give them with --shape {i.name}=D1,D2,...")
        inputs.append((i.name, shape))
    unknown = set(shapes) - {n for n, _ in inputs}
    if unknown:
        raise SystemExit(f"{path}: --shape names no input of the model: {', '.join(sorted(unknown))}")
    outputs = [(o.name, dims(o)) for o in m.graph.output]
    return inputs, outputs


def timed(call, runs: int, warmup: int) -> list[float]:
    for _ in range(warmup):
        call()
    t = []
    clock = time.perf_counter_ns
    for _ in range(runs):
        t0 = clock()
        call()
        t.append((clock() - t0) / 1000.0)
    return t


def runner_onnxruntime(path, feeds, outputs):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    binding = sess.io_binding()
    for name, x in feeds.items():
        binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(x))
    if any(d <= 0 for _, shape in outputs for d in shape):  # symbolic output dims: ask a first call
        first = sess.run([n for n, _ in outputs], feeds)
        outputs = [(n, list(y.shape)) for (n, _), y in zip(outputs, first)]
    results = {}
    for name, shape in outputs:
        results[name] = np.empty(shape, np.float32)
        binding.bind_output(name, "cpu", 0, np.float32, list(shape), results[name].ctypes.data)

    def call():
        sess.run_with_iobinding(binding)

    return call, results, {"onnxruntime": ort.__version__, "providers": sess.get_providers()}, so


def onnxruntime_floor_us(feeds, so, runs: int) -> float:
    """Median time of the same kind of call on a graph that only copies its first input: the runtime's fixed cost."""
    import onnxruntime as ort
    from onnx import TensorProto, helper

    name, x = next(iter(feeds.items()))
    vi = helper.make_tensor_value_info(name, TensorProto.FLOAT, list(x.shape))
    vo = helper.make_tensor_value_info("y", TensorProto.FLOAT, list(x.shape))
    g = helper.make_graph([helper.make_node("Identity", [name], ["y"])], "floor", [vi], [vo])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    binding = sess.io_binding()
    binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(x))
    y = np.empty(x.shape, np.float32)
    binding.bind_output("y", "cpu", 0, np.float32, list(x.shape), y.ctypes.data)
    t = sorted(timed(lambda: sess.run_with_iobinding(binding), runs, 10))
    return t[len(t) // 2]


def torch_module(path):
    import onnx
    import onnx2torch
    import torch

    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    module = onnx2torch.convert(onnx.load(path)).eval()
    from importlib import metadata

    versions = {"torch": torch.__version__, "onnx2torch": metadata.version("onnx2torch"),
                "torch_threads": torch.get_num_threads(), "torch_interop_threads": torch.get_num_interop_threads()}
    return torch, module, versions


def runner_torch(path, feeds, outputs, script: bool):
    torch, module, versions = torch_module(path)
    args = tuple(torch.from_numpy(x) for x in feeds.values())
    names = [n for n, _ in outputs]
    if script:
        with torch.no_grad():
            traced = torch.jit.trace(module, args, check_trace=False)
            module = torch.jit.optimize_for_inference(torch.jit.freeze(traced.eval()))
    results = {}

    def call():
        with torch.inference_mode():
            return module(*args)

    def keep():
        y = call()
        ys = y if isinstance(y, (tuple, list)) else [y]
        for n, v in zip(names, ys):
            results[n] = v.detach().numpy()

    return call, results, versions, keep


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("runner", choices=["onnxruntime", "torch_eager", "torchscript"])
    ap.add_argument("model", help="MODEL.onnx")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--expected", action="append", default=[], metavar="NAME=y.npy")
    ap.add_argument("--shape", action="append", default=[], metavar="NAME=D1,D2,...",
                    help="shape of an input with symbolic dims (repeatable)")
    args = ap.parse_args(argv)

    inputs, outputs = onnx_io(args.model, parse_shapes(args.shape))
    feeds = {name: bench_input(shape, i) for i, (name, shape) in enumerate(inputs)}
    t_setup = time.perf_counter()
    so = None
    if args.runner == "onnxruntime":
        call, results, versions, so = runner_onnxruntime(args.model, feeds, outputs)
        keep = call
    else:
        call, results, versions, keep = runner_torch(args.model, feeds, outputs, args.runner == "torchscript")
    keep()  # the first call, with its output kept for --expected
    setup_s = time.perf_counter() - t_setup
    t = sorted(timed(call, args.runs, args.warmup))
    timer = sorted(timed(lambda: None, 200, 10))
    report = {"runner": args.runner, "min_us": t[0], "median_us": t[len(t) // 2], "max_us": t[-1],
              "runs": args.runs, "warmup": args.warmup, "timer_us": timer[len(timer) // 2],
              "setup_s": round(setup_s, 3), "versions": versions}
    if so is not None:
        report["call_floor_us"] = onnxruntime_floor_us(feeds, so, max(args.runs, 50))
    errors = {}
    for text in args.expected:
        name, path = text.split("=", 1)
        want = np.load(path)
        got = results.get(name)
        if got is None or got.shape != want.shape:
            errors[name] = None
            continue
        errors[name] = float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-30))
    if errors:
        report["max_rel_err"] = errors
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
