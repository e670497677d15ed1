#!/usr/bin/env python3
"""hybgen's generated CUDA against PyTorch on the same GPU: same model, same weights, same input.

    gpu_bench.py --out OUT [--phase all|prepare|measure|check-mapping]
                 [--hybgen build/hybgen] [--export-zoo build/examples/export_zoo]
                 [--configs resnet18_v1:1,resnet18_v1:32,...] [--precisions fp32,tf32,fp16]
                 [--compile-configs transformer_encoder:32:fp16,...] [--time-budget 420] [--runs 100]

prepare (CPU only): for each config NAME:BATCH, export the zoo model with
export_zoo (Xavier seed 42) and, for each hybgen precision, generate its CUDA
(`hybgen --target cuda --external-weights --precision P`) and build it with a
small extern "C" shim into a shared library (nvcc -arch=--arch, --jobs at once).
Both sides use the export's weights with each CNN's batch norms calibrated on
the benchmark's input (calibrate()), so that FP16 has something to compare.

measure (GPU): PyTorch's side is built natively from the same weights, not
converted from ONNX: resnet18_v1 is torchvision.models.resnet18; mobilenet_v2
is this file's GluonMobileNetV2 (Gluon's graph differs from torchvision's: the
first bottleneck keeps its 1x1 expansion, and the classifier is a 1x1
convolution without bias, no Linear); transformer_encoder is
torch.nn.TransformerEncoderLayer (batch_first, post-norm, exact GELU). Every
run gets the same N(0, 1) input (numpy seed 7). Timed, each by CUDA events
around one call, median of --runs after --warmup: PyTorch eager and its
CUDA Graph (torch.cuda.graph around the module call) in FP32 (TF32 off), TF32
(TF32 on in cuBLAS and cuDNN) and FP16 (module.half(), a half input; the CNNs
also in channels_last); hybgen's run() and its replayed graph at each
precision. Each output is compared with PyTorch FP32 eager (max |diff| /
max |ref|). torch.compile(mode="max-autotune") runs for --compile-configs
(NAME:BATCH:PRECISION), each in a child process killed after
--compile-timeout seconds, skipped once the phase has used --time-budget
seconds. The table goes to stdout, everything to OUT/gpu_bench.json.

check-mapping (CPU only): each config's PyTorch model in FP32 on the CPU
against `hybgen run` of the same export, both with the export's weights but
its batch and layer norms' parameters set to seeded random values (Xavier
leaves them the identity, under which a norm mapped onto the wrong layer
would go unseen); exits 1 when any relative difference reaches
--mapping-tolerance (1e-4).

Needs nvcc and torch (torchvision for ResNet-18); nothing here is part of hybgen.
"""
import argparse
import concurrent.futures
import ctypes
import json
import os
import platform
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

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
MODELS = ("resnet18_v1", "mobilenet_v2", "transformer_encoder")
CNNS = ("resnet18_v1", "mobilenet_v2")
HYBGEN_PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
INPUT_SEED = 7
# Differences from PyTorch FP32 past these are marked LARGE in the table (not an error: a flag to look at).
FLAG_DIFF = {"fp32": 1e-4, "tf32": 1e-2, "fp16": 5e-2, "bf16": 2e-1}


def run(cmd, **kw):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return r.stdout


def parse_configs(text, with_precision=False):
    """NAME:BATCH[,...] (NAME:BATCH:PRECISION with with_precision) -> list of tuples; errors name the bad entry."""
    out = []
    for entry in filter(None, text.split(",")):
        parts = entry.split(":")
        want = 3 if with_precision else 2
        if len(parts) != want or parts[0] not in MODELS or not parts[1].isdigit() or int(parts[1]) < 1:
            raise SystemExit(f"gpu_bench.py: bad config '{entry}': want NAME:BATCH{':PRECISION' if with_precision else ''}"
                             f" with NAME one of {', '.join(MODELS)} and BATCH a positive integer")
        if with_precision and parts[2] not in ("fp32", "tf32", "fp16"):
            raise SystemExit(f"gpu_bench.py: bad precision in '{entry}' (fp32, tf32 or fp16)")
        out.append((parts[0], int(parts[1])) + ((parts[2],) if with_precision else ()))
    return out


def stem_of(name, batch):
    return f"{name}_b{batch}"


def model_input(shape):
    """The N(0, 1) input every side gets, float32, from numpy (seed 7)."""
    return np.random.default_rng(INPUT_SEED).standard_normal(shape, dtype=np.float32)


def rel_diff(got, ref):
    got = np.asarray(got, dtype=np.float64).ravel()
    ref = np.asarray(ref, dtype=np.float64).ravel()
    if got.shape != ref.shape:
        return float("inf")
    if not np.all(np.isfinite(got)):
        return float("inf")
    return float(np.max(np.abs(got - ref)) / max(float(np.max(np.abs(ref))), 1e-30))


def read_safetensors(path):
    """name -> float32 array (export_zoo writes F32 only)."""
    data = Path(path).read_bytes()
    if len(data) < 8:
        raise RuntimeError(f"{path}: not a safetensors file (too short)")
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        if t["dtype"] != "F32":
            raise RuntimeError(f"{path}: {name} is {t['dtype']}, want F32")
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(data, dtype=np.float32, count=(b - a) // 4, offset=8 + n + a).reshape(t["shape"])
    return out


def write_safetensors(path, tensors):
    """name -> float32 array, written as safetensors (the whole file or none)."""
    header, offset, blobs = {}, 0, []
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name], dtype=np.float32)
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
        blobs.append(a.tobytes())
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    tmp = Path(str(path) + ".tmp-write")
    tmp.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))
    tmp.replace(path)


def perturb_norms(weights):
    """A copy whose normalisation parameters are no longer the identity that Xavier initialisation leaves (gamma 1,
    beta 0, mean 0, variance 1), so that a batch or layer norm mapped onto the wrong layer changes the output."""
    rng = np.random.default_rng(3)
    out = dict(weights)
    for k, v in weights.items():
        if k.endswith(("_gamma", "_running_var")):
            out[k] = rng.uniform(0.5, 1.5, v.shape).astype(np.float32)
        elif k.endswith(("_beta", "_running_mean")):
            out[k] = rng.normal(0.0, 0.2, v.shape).astype(np.float32)
    return out


def export(name, batch, args, work: Path):
    """export_zoo NAME work/STEM BATCH, once (returns the prefix)."""
    prefix = work / stem_of(name, batch)
    if not (prefix.with_suffix(".json").exists() and prefix.with_suffix(".safetensors").exists()):
        run([args.export_zoo, name, prefix, batch])
    return prefix


def calibrate(name, prefix):
    """The weights both sides are timed with: PREFIX.calibrated.safetensors, where a CNN's batch norms hold the
    mean and variance of their inputs on the benchmark's input. Xavier weights with identity norms shrink
    MobileNet v2's activations by about 10x per bottleneck (its output is near 1e-11, below FP16's range),
    which would leave nothing to compare at FP16; calibrated, every layer's output is of order 1, as in a
    trained network. The transformer's layer norms need nothing: its weights are copied unchanged."""
    import torch
    out = Path(str(prefix) + ".calibrated.safetensors")
    weights = read_safetensors(str(prefix) + ".safetensors")
    if name in CNNS:
        module, graph = torch_model(torch, name, prefix)
        bns = [m for m in module.modules() if isinstance(m, torch.nn.BatchNorm2d)]
        for bn in bns:
            bn.reset_running_stats()
            bn.momentum = None  # a cumulative average: after one batch, that batch's statistics
        module.train()
        with torch.no_grad():
            module(torch.from_numpy(model_input(graph["inputs"][0]["shape"])))
        state = module.state_dict()
        weights = dict(weights)
        for key, zoo in module.zoo_names.items():
            if key.endswith(("running_mean", "running_var")):
                weights[zoo] = state[key].numpy().astype(np.float32)
    write_safetensors(out, weights)
    return out


# ----------------------------------------------------------------------------------------------------------------
# PyTorch's side, built natively with the zoo export's weights.


def graph_nodes_by_weight(graph):
    """weight name -> the node that takes it."""
    out = {}
    for node in graph["nodes"]:
        for i in node["inputs"]:
            out[i] = node
    return out


def indexed(weights, prefix, suffix):
    """Names PREFIX<N>SUFFIX sorted by N: Gluon numbers layers in the order they are created."""
    pat = re.compile(re.escape(prefix) + r"(\d+)" + re.escape(suffix) + "$")
    found = [(int(m.group(1)), k) for k in weights for m in [pat.match(k)] if m]
    return [k[:-len(suffix)] for _, k in sorted(found)]


def map_cnn(torch, module, graph, weights):
    """Copies the zoo's conv/batchnorm/dense weights, in the order Gluon created them, onto module's Conv2d,
    BatchNorm2d and Linear layers in the order module registered them, checking every layer's hyperparameters
    against the zoo graph's node; every weight on both sides must be used exactly once."""
    nn = torch.nn
    by_weight = graph_nodes_by_weight(graph)
    state = {}
    convs = [m for m in module.named_modules() if isinstance(m[1], nn.Conv2d)]
    bns = [m for m in module.named_modules() if isinstance(m[1], nn.BatchNorm2d)]
    fcs = [m for m in module.named_modules() if isinstance(m[1], nn.Linear)]
    zconvs, zbns, zfcs = indexed(weights, "conv", "_weight"), indexed(weights, "batchnorm", "_gamma"), \
        indexed(weights, "dense", "_weight")
    if (len(convs), len(bns), len(fcs)) != (len(zconvs), len(zbns), len(zfcs)):
        raise RuntimeError(f"layer counts differ: torch {len(convs)} conv, {len(bns)} batchnorm, {len(fcs)} linear; "
                           f"zoo {len(zconvs)}, {len(zbns)}, {len(zfcs)}")
    for (tname, conv), z in zip(convs, zconvs):
        a = by_weight[z + "_weight"]["attrs"]
        want = dict(kernel=list(conv.kernel_size), stride=list(conv.stride), pad=list(conv.padding),
                    num_filter=conv.out_channels, num_group=conv.groups, no_bias=conv.bias is None,
                    dilate=list(conv.dilation))
        got = {k: a.get(k) for k in want}
        if got != want or tuple(weights[z + "_weight"].shape) != tuple(conv.weight.shape):
            raise RuntimeError(f"{tname} ({want}, {tuple(conv.weight.shape)}) does not match zoo {z} ({got}, "
                               f"{weights[z + '_weight'].shape})")
        state[tname + ".weight"] = weights[z + "_weight"]
        if conv.bias is not None:
            state[tname + ".bias"] = weights[z + "_bias"]
    for (tname, bn), z in zip(bns, zbns):
        a = by_weight[z + "_gamma"]["attrs"]
        if abs(a["eps"] - bn.eps) > 1e-12 * max(1.0, bn.eps) or a.get("fix_gamma") or a.get("axis", 1) != 1 \
                or weights[z + "_gamma"].shape[0] != bn.num_features:
            raise RuntimeError(f"{tname} (eps {bn.eps}, {bn.num_features}) does not match zoo {z} ({a})")
        for t, g in (("weight", "gamma"), ("bias", "beta"), ("running_mean", "running_mean"),
                     ("running_var", "running_var")):
            state[f"{tname}.{t}"] = weights[f"{z}_{g}"]
    for (tname, fc), z in zip(fcs, zfcs):
        a = by_weight[z + "_weight"]["attrs"]
        if a["num_hidden"] != fc.out_features or a["no_bias"] != (fc.bias is None) or \
                tuple(weights[z + "_weight"].shape) != tuple(fc.weight.shape):
            raise RuntimeError(f"{tname} does not match zoo {z} ({a})")
        state[tname + ".weight"] = weights[z + "_weight"]
        if fc.bias is not None:
            state[tname + ".bias"] = weights[z + "_bias"]
    module = load_exact(torch, module, state, weights)
    ids = {id(v): k for k, v in weights.items()}
    module.zoo_names = {k: ids[id(v)] for k, v in state.items()}  # torch key -> zoo weight name
    return module


def load_exact(torch, module, state, weights):
    """load_state_dict with every parameter and buffer but num_batches_tracked given, and every zoo weight used."""
    used = {id(v) for v in state.values()}
    unused = [k for k, v in weights.items() if id(v) not in used]
    if unused:
        raise RuntimeError(f"zoo weights left unmapped: {unused[:8]}")
    full = module.state_dict()
    missing = [k for k in full if k not in state and not k.endswith("num_batches_tracked")]
    if missing:
        raise RuntimeError(f"torch parameters left unset: {missing[:8]}")
    for k, v in state.items():
        if tuple(full[k].shape) != tuple(v.shape):
            raise RuntimeError(f"{k}: torch shape {tuple(full[k].shape)}, zoo {v.shape}")
        full[k] = torch.from_numpy(np.array(v, dtype=np.float32))
    module.load_state_dict(full, strict=True)
    return module.eval()


def build_resnet18(torch, graph, weights):
    import torchvision
    # Gluon's resnet18_v1 is torchvision's ResNet-18 layer for layer: 7x7/2 conv, BN, relu, 3x3/2 max pool, BasicBlocks
    # with the stride on the first 3x3 and a 1x1 conv + BN downsample, global average pool, flatten, dense.
    if graph["outputs"] != ["dense0_fwd"]:
        raise RuntimeError(f"resnet18_v1: expected one output dense0_fwd, got {graph['outputs']}")
    classes = weights["dense0_weight"].shape[0]
    return map_cnn(torch, torchvision.models.resnet18(weights=None, num_classes=classes), graph, weights)


def gluon_mobilenet_v2(torch, classes):
    """Gluon's mobilenet_v2 (model_zoo.vision 1.9.1, as examples/zoo builds it). torchvision's differs: its first
    bottleneck (expansion 1) has no 1x1 expansion conv, and its classifier is Dropout + Linear with bias where Gluon has a
    1x1 conv without bias after the pooling."""
    nn = torch.nn

    def conv_bn(cin, cout, kernel=1, stride=1, groups=1, relu6=True):
        layers = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
        return layers + ([nn.ReLU6(inplace=True)] if relu6 else [])

    class LinearBottleneck(nn.Module):
        def __init__(self, cin, cout, t, stride):
            super().__init__()
            self.shortcut = stride == 1 and cin == cout
            self.out = nn.Sequential(*conv_bn(cin, cin * t), *conv_bn(cin * t, cin * t, 3, stride, cin * t),
                                     *conv_bn(cin * t, cout, relu6=False))

        def forward(self, x):
            y = self.out(x)
            return y + x if self.shortcut else y

    in_ch = [32, 16, 24, 24, 32, 32, 32, 64, 64, 64, 64, 96, 96, 96, 160, 160, 160]
    ch = [16, 24, 24, 32, 32, 32, 64, 64, 64, 64, 96, 96, 96, 160, 160, 160, 320]
    st = [1, 2, 1, 2, 1, 1, 2, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1]
    layers = conv_bn(3, 32, 3, 2)
    layers += [LinearBottleneck(i, c, 1 if k == 0 else 6, s) for k, (i, c, s) in enumerate(zip(in_ch, ch, st))]
    layers += conv_bn(320, 1280)
    layers += [nn.AdaptiveAvgPool2d(1), nn.Conv2d(1280, classes, 1, bias=False), nn.Flatten()]
    return nn.Sequential(*layers)


def build_mobilenet_v2(torch, graph, weights):
    if graph["outputs"] != ["flatten0_flatten"]:
        raise RuntimeError(f"mobilenet_v2: expected one output flatten0_flatten, got {graph['outputs']}")
    classes = weights[indexed(weights, "conv", "_weight")[-1] + "_weight"].shape[0]
    return map_cnn(torch, gluon_mobilenet_v2(torch, classes), graph, weights)


def build_transformer(torch, graph, weights):
    """torch.nn.TransformerEncoderLayer with the zoo layer's sizes, read from its graph: dense0..2 are query, key
    and value, dense3 the output projection, dense4/dense5 the feed-forward, layernorm0/1 the post-norms."""
    nodes = {n["name"]: n for n in graph["nodes"]}
    by_weight = graph_nodes_by_weight(graph)
    units = weights["dense0_weight"].shape[0]
    hidden = weights["dense4_weight"].shape[0]
    reshape = nodes.get("transformerencoder0_reshape0")
    if reshape is None or reshape["op"] != "Reshape" or reshape["inputs"] != ["dense0_fwd"]:
        raise RuntimeError("transformer_encoder: no Reshape of dense0_fwd to find the number of heads")
    heads = reshape["attrs"]["shape"][2]
    eps = {by_weight[f"layernorm{i}_gamma"]["attrs"]["eps"] for i in (0, 1)}
    act = [n for n in graph["nodes"] if n["inputs"] == ["dense4_fwd"]]
    scale = [n for n in graph["nodes"] if n["op"] == "_mul_scalar"]
    dot0 = nodes["transformerencoder0_batch_dot0"]
    checks = {
        "one eps": len(eps) == 1,
        "exact GELU after dense4": len(act) == 1 and act[0]["op"] == "LeakyReLU" and act[0]["attrs"]["act_type"] == "gelu",
        "scale 1/sqrt(head width)": len(scale) == 1 and abs(scale[0]["attrs"]["scalar"] - (units // heads) ** -0.5) < 1e-7,
        "q K^T": dot0["attrs"]["transpose_b"] and not dot0["attrs"]["transpose_a"],
        "post-norm output": graph["outputs"] == ["layernorm1_fwd"] and
        nodes["layernorm1_fwd"]["inputs"][0] == "transformerencoder0_broadcast_add1" and
        nodes["dense4_fwd"]["inputs"][0] == "layernorm0_fwd",
        "dense0..2 read the input": all(nodes[f"dense{i}_fwd"]["inputs"][0] == "data" for i in range(3)),
        "no flatten": all(nodes[f"dense{i}_fwd"]["attrs"]["flatten"] is False for i in range(6)),
    }
    bad = [k for k, ok in checks.items() if not ok]
    if bad:
        raise RuntimeError(f"transformer_encoder: the graph is not the expected encoder layer ({', '.join(bad)})")
    layer = torch.nn.TransformerEncoderLayer(units, heads, hidden, dropout=0.0, activation="gelu",
                                             layer_norm_eps=eps.pop(), batch_first=True, norm_first=False)
    w = weights
    state = {
        "self_attn.in_proj_weight": np.concatenate([w["dense0_weight"], w["dense1_weight"], w["dense2_weight"]]),
        "self_attn.in_proj_bias": np.concatenate([w["dense0_bias"], w["dense1_bias"], w["dense2_bias"]]),
        "self_attn.out_proj.weight": w["dense3_weight"], "self_attn.out_proj.bias": w["dense3_bias"],
        "linear1.weight": w["dense4_weight"], "linear1.bias": w["dense4_bias"],
        "linear2.weight": w["dense5_weight"], "linear2.bias": w["dense5_bias"],
        "norm1.weight": w["layernorm0_gamma"], "norm1.bias": w["layernorm0_beta"],
        "norm2.weight": w["layernorm1_gamma"], "norm2.bias": w["layernorm1_beta"],
    }
    # The concatenations are new arrays: count their sources as used.
    used = dict(state)
    for i in range(3):
        used[f"_q{i}w"], used[f"_q{i}b"] = w[f"dense{i}_weight"], w[f"dense{i}_bias"]
    unused = [k for k, v in w.items() if all(v is not u for u in used.values())]
    if unused:
        raise RuntimeError(f"transformer_encoder: zoo weights left unmapped: {unused}")
    return load_exact(torch, layer, state, {})


def torch_model(torch, name, prefix, weights_path=None):
    graph = json.loads(Path(str(prefix) + ".json").read_text())
    weights = read_safetensors(weights_path or str(prefix) + ".safetensors")
    build = {"resnet18_v1": build_resnet18, "mobilenet_v2": build_mobilenet_v2,
             "transformer_encoder": build_transformer}[name]
    return build(torch, graph, weights), graph


# ----------------------------------------------------------------------------------------------------------------
# check-mapping: PyTorch FP32 on the CPU against `hybgen run`.


def cpu_target():
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    return "x86-64-v3" if platform.machine() == "x86_64" and " avx2 " in flags and " fma " in flags else "generic"


def check_mapping(args, work):
    import torch
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    failed = 0
    target = cpu_target()
    print(f"{'config':26} {'torch s':>8} {'hybgen run s':>13} {'rel diff':>9}", flush=True)
    for name, batch in parse_configs(args.configs):
        cfg = f"{name}:{batch}"
        try:
            prefix = export(name, batch, args, work)
            perturbed = Path(str(prefix) + ".perturbed.safetensors")
            write_safetensors(perturbed, perturb_norms(read_safetensors(str(prefix) + ".safetensors")))
            module, graph = torch_model(torch, name, prefix, perturbed)
            shape = graph["inputs"][0]["shape"]
            x = model_input(shape)
            t0 = time.time()
            with torch.inference_mode():
                theirs = module(torch.from_numpy(x)).numpy()
            t_torch = time.time() - t0
            with tempfile.TemporaryDirectory(dir=work) as tmp:
                xin, yout = Path(tmp) / "x.npy", Path(tmp) / "y.npy"
                np.save(xin, x)
                t0 = time.time()
                run([args.hybgen, "run", str(prefix) + ".json", "-w", perturbed, "--target", target,
                     "--input", f"{graph['inputs'][0]['name']}={xin}", "--output", f"{graph['outputs'][0]}={yout}"])
                t_hybgen = time.time() - t0
                ours = np.load(yout)
            d = rel_diff(ours, theirs)
            ok = d < args.mapping_tolerance
            failed += not ok
            print(f"{cfg:26} {t_torch:8.2f} {t_hybgen:13.1f} {d:9.1e}{'' if ok else '  MISMATCH'}", flush=True)
        except Exception as e:
            failed += 1
            print(f"{cfg:26} FAILED: {e}", flush=True)
    print(f"check-mapping: {failed} of {len(parse_configs(args.configs))} configs failed (tolerance "
          f"{args.mapping_tolerance:g}, hybgen run --target {target})", flush=True)
    return 1 if failed else 0


# ----------------------------------------------------------------------------------------------------------------
# prepare: export, generate and build (CPU only).


def nvcc_arch(precision, args):
    """nvcc -arch for a library: --arch, except sm_90a for fp16 / bf16 on a Hopper GPU when --arch is native:
    the wgmma GEMM exists only in sm_90a code (plain sm_90 code runs the mma.sync kernel)."""
    if args.arch != "native" or precision not in ("fp16", "bf16"):
        return args.arch
    try:
        caps = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"], capture_output=True,
                              text=True, timeout=60).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return args.arch
    return "sm_90a" if caps and caps[0] == "9.0" else args.arch


def prepare_one(name, batch, precision, args, work: Path):
    t0 = time.time()
    prefix = export(name, batch, args, work)
    stem = f"{stem_of(name, batch)}_{precision}"
    gen = work / (stem + "_cuda")
    calibrated = str(prefix) + ".calibrated.safetensors"
    run([args.hybgen, str(prefix) + ".json", "-w", calibrated, "--target", "cuda", "--precision", precision,
         "--external-weights", "--name", stem, "-o", gen])
    (gen / "shim.cu").write_text(SHIM.format(name=stem))
    t1 = time.time()
    lib = gen / f"lib{stem}.so"
    tmp = gen / f"lib{stem}.so.tmp-build"
    run([args.nvcc, "-std=c++17", "-O3", f"-arch={nvcc_arch(precision, args)}", "-shared", "-Xcompiler", "-fPIC", "-I", gen,
         gen / "shim.cu", gen / f"{stem}.cu", "-o", tmp])
    tmp.replace(lib)  # no half-written library for measure to load
    manifest = json.loads((gen / f"{stem}.manifest.json").read_text())
    return {"config": f"{name}:{batch}", "name": name, "batch": batch, "precision": precision, "stem": stem,
            "prefix": str(prefix), "calibrated": calibrated, "lib": str(lib), "weights": str(gen / f"{stem}.weights.bin"),
            "input": manifest["inputs"][0]["shape"], "output": manifest["outputs"][0]["shape"],
            "kernels": len(manifest["kernels"]), "nvcc_seconds": round(time.time() - t1, 1),
            "prepare_seconds": round(time.time() - t0, 1)}


def prepare_all(args, work):
    configs = parse_configs(args.configs)
    precisions = args.precisions.split(",")
    bad = [p for p in precisions if p not in HYBGEN_PRECISIONS]
    if bad:
        raise SystemExit(f"gpu_bench.py: unknown precision(s) {bad} (want {', '.join(HYBGEN_PRECISIONS)})")
    # Exports first (cheap, and each is shared by its precisions), then the builds, biggest models first.
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        exports = [(n, b, pool.submit(export, n, b, args, work)) for n, b in configs]
    ready = []
    for n, b, f in exports:
        try:
            f.result()
            calibrate(n, work / stem_of(n, b))
            ready.append((n, b))
        except Exception as e:  # one config failing leaves the others
            print(f"FAILED to export {n}:{b}: {e}", flush=True)
    jobs = [(n, b, p) for n, b in ready for p in precisions]
    order = sorted(jobs, key=lambda j: (MODELS.index(j[0]) if j[0] in CNNS else 9, -j[1]))
    prepared, t0 = [], time.time()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(prepare_one, n, b, p, args, work): (n, b, p) for n, b, p in order}
        for f in concurrent.futures.as_completed(futures):
            n, b, p = futures[f]
            try:
                prepared.append(f.result())
                print(f"prepared {n}:{b} {p} in {prepared[-1]['prepare_seconds']} s "
                      f"(nvcc {prepared[-1]['nvcc_seconds']} s)", flush=True)
            except Exception as e:  # one config failing leaves the others
                print(f"FAILED to prepare {n}:{b} {p}: {e}", flush=True)
    print(f"prepare: {len(prepared)} of {len(configs) * len(precisions)} libraries in {time.time() - t0:.0f} s with {args.jobs} jobs",
          flush=True)
    prepared.sort(key=lambda p: jobs.index((p["name"], p["batch"], p["precision"])))
    return prepared


# ----------------------------------------------------------------------------------------------------------------
# measure (GPU).


def set_tf32(torch, on):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.backends.cuda.matmul.allow_tf32 = on
        torch.backends.cudnn.allow_tf32 = on


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


def torch_variants(name):
    """(label, precision, channels_last) for PyTorch's side."""
    v = [("fp32", "fp32", False), ("tf32", "tf32", False)]
    if name in CNNS:
        v += [("tf32 cl", "tf32", True), ("fp16 cl", "fp16", True), ("fp16", "fp16", False)]
    else:
        v += [("fp16", "fp16", False)]
    return v


def torch_setup(torch, module_fp32, x_np, precision, channels_last):
    """A copy of the module and input for one variant, on the GPU, with the TF32 switches set."""
    import copy
    set_tf32(torch, precision == "tf32")
    m = copy.deepcopy(module_fp32).cuda()
    x = torch.from_numpy(x_np).cuda()
    if precision == "fp16":
        m, x = m.half(), x.half()
    if channels_last:
        m, x = m.to(memory_format=torch.channels_last), x.contiguous(memory_format=torch.channels_last)
    return m.eval(), x


def torch_graph(torch, module, x):
    """torch.cuda.graph around one module call, after warm-up calls on a side stream; returns (graph, output)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            module(x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = module(x)
    return g, y


def measure_torch(torch, name, module_fp32, x_np, ref, args):
    out = {}
    for label, precision, cl in torch_variants(name):
        r = {}
        try:
            m, x = torch_setup(torch, module_fp32, x_np, precision, cl)
            with torch.inference_mode():
                y = m(x)
                r["rel_diff"] = rel_diff(y.float().cpu().numpy(), ref)
                r["eager_us"] = timed(torch, lambda: m(x), args.runs, args.warmup)
                try:
                    g, gy = torch_graph(torch, m, x)
                except Exception as e:
                    # TransformerEncoderLayer's fused inference path, should it not capture: the plain one.
                    if name in CNNS or not hasattr(torch.backends, "mha"):
                        raise
                    r["graph_note"] = "MHA fast path off: " + (str(e).splitlines() or [type(e).__name__])[0][:200]
                    torch.backends.mha.set_fastpath_enabled(False)
                    try:
                        g, gy = torch_graph(torch, m, x)
                    finally:
                        torch.backends.mha.set_fastpath_enabled(True)
                g.replay()
                torch.cuda.synchronize()
                r["graph_rel_diff"] = rel_diff(gy.float().cpu().numpy(), ref)
                r["graph_us"] = timed(torch, g.replay, args.runs, args.warmup)
            g = gy = m = x = y = None  # free this variant's graph and memory before the next
        except Exception as e:
            r["error"] = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
        out[label] = r
        torch.cuda.empty_cache()
    set_tf32(torch, False)
    return out


def measure_hybgen(torch, p, x_np, ref, args):
    lib = ctypes.CDLL(p["lib"])
    lib.hg_init.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.hg_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    lib.hg_capture.argtypes = lib.hg_run.argtypes
    lib.hg_replay.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.hg_release.argtypes = [ctypes.c_void_p]
    model_bytes = ctypes.create_string_buffer(lib.hg_model_bytes())
    model = ctypes.addressof(model_bytes)
    raw = np.fromfile(p["weights"], dtype=np.uint8)
    weights = np.empty(raw.size + 64, dtype=np.uint8)  # 64-byte aligned, as a program that loads the file would have
    weights = weights[-weights.ctypes.data % 64:][:raw.size]
    weights[:] = raw
    status = lib.hg_init(model, weights.ctypes.data)
    if status != 0:
        raise RuntimeError(f"{p['stem']}: init() returned {status}")
    r = {"kernels": p["kernels"], "nvcc_seconds": p["nvcc_seconds"]}
    try:
        x = torch.from_numpy(x_np).cuda()
        y = torch.empty(*p["output"], device="cuda")
        # Not the legacy default stream, which CUDA cannot capture into a graph.
        stream = torch.cuda.current_stream().cuda_stream

        def hybgen_run():
            if lib.hg_run(model, x.data_ptr(), y.data_ptr(), stream) != 0:
                raise RuntimeError(f"{p['stem']}: run() failed")

        hybgen_run()
        torch.cuda.synchronize()
        r["rel_diff"] = rel_diff(y.cpu().numpy(), ref)
        r["run_us"] = timed(torch, hybgen_run, args.runs, args.warmup)
        y.zero_()
        if lib.hg_capture(model, x.data_ptr(), y.data_ptr(), stream) != 0:
            raise RuntimeError(f"{p['stem']}: capture() failed")
        if lib.hg_replay(model, stream) != 0:
            raise RuntimeError(f"{p['stem']}: replay() failed")
        torch.cuda.synchronize()
        r["graph_rel_diff"] = rel_diff(y.cpu().numpy(), ref)
        r["graph_us"] = timed(torch, lambda: lib.hg_replay(model, stream), args.runs, args.warmup)
    finally:
        torch.cuda.synchronize()
        lib.hg_release(model)
    return r


def compile_one(args):
    """Child process: torch.compile(mode=max-autotune) of one NAME:BATCH:PRECISION; prints one JSON line."""
    import torch
    (name, batch, precision), = parse_configs(args.compile_one, with_precision=True)
    prefix = Path(args.out) / "work" / stem_of(name, batch)
    module, graph = torch_model(torch, name, prefix, str(prefix) + ".calibrated.safetensors")
    x_np = model_input(graph["inputs"][0]["shape"])
    set_tf32(torch, False)
    with torch.inference_mode():
        ref = module.cuda()(torch.from_numpy(x_np).cuda()).cpu().numpy()
    m, x = torch_setup(torch, module, x_np, precision, name in CNNS and precision != "fp32")
    r = {"config": f"{name}:{batch}", "precision": precision, "channels_last": name in CNNS and precision != "fp32"}
    with torch.inference_mode():
        compiled = torch.compile(m, mode="max-autotune")
        t0 = time.time()
        for _ in range(3):
            y = compiled(x)
        torch.cuda.synchronize()
        r["compile_seconds"] = round(time.time() - t0, 1)
        r["rel_diff"] = rel_diff(y.float().cpu().numpy(), ref)
        r["us"] = timed(torch, lambda: compiled(x), args.runs, args.warmup)
    print("RESULT " + json.dumps(r), flush=True)
    return 0


def run_compile_child(cfg, timeout, args):
    """compile_one in a child process of its own session, killed with its workers after timeout seconds."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--phase", "compile-one", "--compile-one", cfg,
           "--out", args.out, "--runs", str(args.runs), "--warmup", str(args.warmup)]
    t0 = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        text, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return {"skipped": f"compile did not finish in {timeout:.0f} s"}
    for line in text.splitlines():
        if line.startswith("RESULT "):
            r = json.loads(line[7:])
            r["child_seconds"] = round(time.time() - t0, 1)
            return r
    tail = [l for l in text.splitlines() if l.strip()][-3:]
    return {"error": f"exit {proc.returncode}: " + " | ".join(tail)[:400]}


def machine_info(torch):
    info = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(), "python": platform.python_version()}
    try:
        import torchvision
        info["torchvision"] = torchvision.__version__
    except ImportError:
        pass
    try:
        q = run(["nvidia-smi", "--query-gpu=driver_version,clocks.max.sm,memory.total", "--format=csv,noheader"])
        info["driver"], info["max_sm_clock"], info["memory"] = [s.strip() for s in q.splitlines()[0].split(",")]
    except Exception as e:
        info["driver"] = f"unknown ({str(e).splitlines()[0][:80]})"
    props = torch.cuda.get_device_properties(0)
    info["sms"] = props.multi_processor_count
    return info


def fmt(v):
    return f"{v:.1f}" if isinstance(v, float) else "-"


def measure_all(prepared, args, out):
    import torch
    if not prepared:
        print("gpu_bench.py: nothing was prepared (see the prepare phase's output)", flush=True)
        return 1
    if not torch.cuda.is_available():
        print("gpu_bench.py: torch sees no CUDA device", flush=True)
        return 2
    t_start = time.time()
    set_tf32(torch, False)
    torch.backends.cudnn.benchmark = args.cudnn_benchmark
    results = {"machine": machine_info(torch), "runs": args.runs, "warmup": args.warmup,
               "cudnn_benchmark": args.cudnn_benchmark, "configs": []}
    print(json.dumps(results["machine"]), flush=True)
    by_config = {}
    for p in prepared:
        by_config.setdefault(p["config"], []).append(p)
    header = f"{'config':24} {'side':8} {'precision':10} {'eager/run':>10} {'graph':>9} {'rel diff':>9}"
    print(header, flush=True)
    for cfg, libs in by_config.items():
        name, batch = libs[0]["name"], libs[0]["batch"]
        r = {"config": cfg, "torch": {}, "hybgen": {}}
        try:
            with torch.cuda.stream(torch.cuda.Stream()):
                module, graph = torch_model(torch, name, libs[0]["prefix"], libs[0]["calibrated"])
                x_np = model_input(graph["inputs"][0]["shape"])
                with torch.inference_mode():
                    ref = module.cuda()(torch.from_numpy(x_np).cuda()).cpu().numpy()
                module = module.cpu()
                r["torch"] = measure_torch(torch, name, module, x_np, ref, args)
                for p in libs:
                    try:
                        r["hybgen"][p["precision"]] = measure_hybgen(torch, p, x_np, ref, args)
                    except Exception as e:
                        r["hybgen"][p["precision"]] = {"error": str(e).splitlines()[0][:300]}
        except Exception as e:
            r["error"] = str(e).splitlines()[0][:300]
            print(f"FAILED {cfg}: {r['error']}", flush=True)
        for side in ("torch", "hybgen"):
            for label, v in r[side].items():
                prec = label.split()[0]
                worst = max(v.get("rel_diff", 0.0), v.get("graph_rel_diff", 0.0))
                extra = f"  {v['error']}" if "error" in v else ("  LARGE" if worst > FLAG_DIFF[prec] else "")
                extra += "  (graph: MHA fast path off)" if "graph_note" in v else ""
                print(f"{cfg:24} {side:8} {label:10} {fmt(v.get('eager_us', v.get('run_us'))):>10} "
                      f"{fmt(v.get('graph_us')):>9} {v.get('rel_diff', float('nan')):9.1e}{extra}", flush=True)
        results["configs"].append(r)
        (out / "gpu_bench.json").write_text(json.dumps(results, indent=2))
    results["compile"] = []
    for name, batch, precision in parse_configs(args.compile_configs, with_precision=True):
        cfg = f"{name}:{batch}:{precision}"
        left = args.time_budget - (time.time() - t_start)
        if f"{name}:{batch}" not in by_config:
            r = {"skipped": "not among the measured configs (its export is missing)"}
        elif left < 60:
            r = {"skipped": f"time budget: {time.time() - t_start:.0f} s of {args.time_budget} s used"}
        else:
            r = run_compile_child(cfg, min(args.compile_timeout, left), args)
        r["config"] = cfg
        results["compile"].append(r)
        note = r.get("skipped") or r.get("error")
        print(f"torch.compile max-autotune {cfg}: " + (note if note else f"{r['us']:.1f} us (compiled in "
              f"{r['compile_seconds']} s), rel diff {r['rel_diff']:.1e}"), flush=True)
        (out / "gpu_bench.json").write_text(json.dumps(results, indent=2))
    results["targets"] = targets(results)
    results["measure_seconds"] = round(time.time() - t_start, 1)
    (out / "gpu_bench.json").write_text(json.dumps(results, indent=2))
    print("\nThe issue's targets (hybgen against PyTorch on this GPU):", flush=True)
    for t in results["targets"]:
        print(f"  {t['verdict']:5} {t['what']}: {t['detail']}", flush=True)
    print(f"measure: {results['measure_seconds']} s", flush=True)
    return 0


def targets(results):
    """The issue's model targets, each PASS / FAIL / n/a with the figures it compares."""
    cfgs = {r["config"]: r for r in results["configs"]}

    def get(cfg, side, label, key):
        return cfgs.get(cfg, {}).get(side, {}).get(label, {}).get(key)

    out = []

    def vs(what, ours, theirs, ours_text, theirs_text):
        if ours is None or theirs is None:
            out.append({"what": what, "verdict": "n/a", "detail": "not measured"})
        else:
            out.append({"what": what, "verdict": "PASS" if ours <= theirs else "FAIL",
                        "detail": f"{ours_text} {ours:.1f} us vs {theirs_text} {theirs:.1f} us ({ours / theirs:.2f}x)"})

    vs("ResNet-18 b32 tf32 <= PyTorch TF32 eager", get("resnet18_v1:32", "hybgen", "tf32", "run_us"),
       get("resnet18_v1:32", "torch", "tf32", "eager_us"), "hybgen run()", "PyTorch eager")
    vs("ResNet-18 b32 fp16 <= PyTorch FP16 channels_last graph", get("resnet18_v1:32", "hybgen", "fp16", "graph_us"),
       get("resnet18_v1:32", "torch", "fp16 cl", "graph_us"), "hybgen graph", "PyTorch graph")
    for b in (1, 32):
        for prec in ("fp32", "tf32", "fp16"):
            cfg = f"transformer_encoder:{b}"
            vs(f"transformer b{b} {prec} <= PyTorch {prec.upper()} graph", get(cfg, "hybgen", prec, "graph_us"),
               get(cfg, "torch", prec, "graph_us"), "hybgen graph", "PyTorch graph")
    for prec, limit in (("fp32", 250.0), ("fp16", 150.0)):
        t = get("resnet18_v1:1", "hybgen", prec, "graph_us")
        out.append({"what": f"ResNet-18 b1 {prec} graph <= {limit:.0f} us", "verdict": "n/a" if t is None else
                    ("PASS" if t <= limit else "FAIL"), "detail": "not measured" if t is None else f"{t:.1f} us"})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--phase", choices=["all", "prepare", "measure", "check-mapping", "compile-one"], default="all",
                    help="prepare: export, generate and build only (CPU); measure: time what prepare left in OUT; "
                         "check-mapping: PyTorch's models against `hybgen run` on the CPU")
    ap.add_argument("--hybgen", default="build/hybgen")
    ap.add_argument("--export-zoo", default="build/examples/export_zoo")
    ap.add_argument("--nvcc", default="nvcc")
    ap.add_argument("--configs", default="resnet18_v1:1,resnet18_v1:32,mobilenet_v2:1,mobilenet_v2:32,"
                                         "transformer_encoder:1,transformer_encoder:32")
    ap.add_argument("--precisions", default="fp32,tf32,fp16", help="hybgen's, comma-separated (fp32 tf32 fp16 bf16)")
    ap.add_argument("--compile-configs", default="transformer_encoder:32:fp16,resnet18_v1:32:fp16",
                    help="NAME:BATCH:PRECISION for torch.compile(mode='max-autotune'); '' for none")
    ap.add_argument("--compile-timeout", type=float, default=180, help="seconds one torch.compile child may take")
    ap.add_argument("--time-budget", type=float, default=420,
                    help="seconds of the measure phase after which torch.compile is skipped")
    ap.add_argument("--compile-one", help=argparse.SUPPRESS)
    ap.add_argument("--cudnn-benchmark", action="store_true", help="torch.backends.cudnn.benchmark (default off, "
                                                                     "as PyTorch's default)")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    ap.add_argument("--arch", default="native", help="nvcc -arch for the shared libraries (default: this GPU's)")
    ap.add_argument("--mapping-tolerance", type=float, default=1e-4)
    args = ap.parse_args()
    if args.runs < 1 or args.warmup < 0 or args.jobs < 1:
        raise SystemExit("gpu_bench.py: --runs and --jobs must be positive, --warmup not negative")
    parse_configs(args.configs)
    parse_configs(args.compile_configs, with_precision=True)
    out = Path(args.out)
    work = out / "work"
    work.mkdir(parents=True, exist_ok=True)
    if args.phase == "compile-one":
        return compile_one(args)
    if args.phase == "check-mapping":
        return check_mapping(args, work)
    if args.phase == "measure":
        prepared = json.loads((work / "prepared.json").read_text())
    else:
        prepared = prepare_all(args, work)
        (work / "prepared.json").write_text(json.dumps(prepared, indent=2))
        if args.phase == "prepare":
            return 0 if prepared else 1
    return measure_all(prepared, args, out)


if __name__ == "__main__":
    raise SystemExit(main())
