#!/usr/bin/env python3
"""ONNX Runtime's time per node on one model, beside `hybgen bench --profile`.

    ort_profile.py MODEL.onnx [--runs N] [--warmup W] [--shape NAME=D1,D2,...] [--top K]

Runs MODEL.onnx in ONNX Runtime as peer_runner.py times it (one thread,
sequential, optimizations ALL, the same input values) with its profiler on
(SessionOptions.enable_profiling), and prints each node's median time over the
runs, slowest first, with its op and share of the nodes' sum, then the sums by
op. ONNX Runtime's nodes are the graph after its own fusions (Conv with its
Relu, FusedConv), so they map onto hybgen's kernels, not one to one onto the
model's nodes. Issue 42 reads it beside `hybgen bench MODEL --profile`, whose
kernel times come with GFLOP/s against bench/fma_peak.h.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_runner import bench_input, onnx_io, parse_shapes  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--shape", action="append", default=[])
    ap.add_argument("--top", type=int, default=25, help="nodes listed (default 25)")
    args = ap.parse_args(argv)

    import onnxruntime as ort

    inputs, _ = onnx_io(args.model, parse_shapes(args.shape))
    feeds = {name: bench_input(shape, i) for i, (name, shape) in enumerate(inputs)}
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    with tempfile.TemporaryDirectory() as tmp:
        so.enable_profiling = True
        so.profile_file_prefix = os.path.join(tmp, "ort")
        sess = ort.InferenceSession(args.model, so, providers=["CPUExecutionProvider"])
        for _ in range(args.warmup + args.runs):
            sess.run(None, feeds)
        with open(sess.end_profiling()) as f:
            events = json.load(f)

    # Per node, its kernel's time in each run (the last `runs` of them: the warm-up first).
    times: dict[str, list[float]] = {}
    ops: dict[str, str] = {}
    for e in events:
        if e.get("cat") != "Node" or not e.get("name", "").endswith("_kernel_time"):
            continue
        node = e["name"][: -len("_kernel_time")]
        times.setdefault(node, []).append(e["dur"] / 1000.0)
        ops[node] = e.get("args", {}).get("op_name", "?")
    median = {node: statistics.median(t[-args.runs:]) for node, t in times.items()}
    total = sum(median.values())
    print(f"ONNX Runtime {ort.__version__}, {args.model}, one thread, median of {args.runs} runs per node; "
          f"nodes' sum {total:.3f} ms")
    print(f"{'ms':>9} {'share':>6}  {'op':<18} node")
    for node, ms in sorted(median.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"{ms:9.3f} {100 * ms / total:5.1f}%  {ops[node]:<18} {node}")
    by_op: dict[str, float] = {}
    for node, ms in median.items():
        by_op[ops[node]] = by_op.get(ops[node], 0.0) + ms
    print("\nby op:")
    for op, ms in sorted(by_op.items(), key=lambda kv: -kv[1]):
        print(f"{ms:9.3f} {100 * ms / total:5.1f}%  {op}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
