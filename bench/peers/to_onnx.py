#!/usr/bin/env python3
"""Convert a hybgen model (MODEL.json + the .safetensors beside it) to ONNX.

    to_onnx.py MODEL.json OUT.onnx [--weights W.safetensors] [--hybgen PATH]
               [--check] [--randomize-norm SEED] [--tolerance 1e-4]

Writes an opset-17 ONNX model built with the `onnx` package's helper API: the
graph inputs and outputs keep their names, weights become initializers.
Intermediate shapes (needed for Reshape and a few axis rules) come from
`hybgen inspect --json --no-optimize MODEL.json`. An op or attribute it
cannot express is an error naming the node; nothing is written then.

--check runs the ONNX model in ONNX Runtime on seeded N(0, 1) inputs, writes
x.npy / y.npy beside OUT.onnx and lets hybgen compare its generated code with
them: `hybgen verify MODEL.json --input NAME=x.npy --expected OUT=y.npy
--tolerance 1e-4` (relative to the largest output magnitude). The exit code is
non-zero when it fails. --randomize-norm SEED first moves BatchNorm/LayerNorm
statistics and scales away from their identity values (as tests/zoo does),
writing OUT-weights.safetensors, so a mistake in them cannot hide.

Needs numpy and onnx (onnxruntime for --check); bench_peers.py installs them
into build-peers/venv. Supported ops: FullyConnected, Convolution, Activation,
LeakyReLU, BatchNorm, Pooling, Flatten, Reshape, Concat, broadcast_* and the
_*_scalar forms, clip, softmax, log_softmax, SoftmaxActivation, SoftmaxOutput,
Dropout, _copy, transpose, dot, batch_dot, LayerNorm, sum, mean, expand_dims,
squeeze, erf/exp/log/sqrt/rsqrt/abs/negative/square, SliceChannel, slice,
slice_axis, Embedding, RNN, SwapAxis, Deconvolution (ConvTranspose), UpSampling
(Resize, or ConvTranspose when bilinear), _contrib_BilinearResize2D (Resize) (and
their aliases, read from `hybgen ops --json`).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np

OPSET = 17
REPO = Path(__file__).resolve().parents[2]


class ConversionError(Exception):
    pass


# ---------------------------------------------------------------- safetensors

_ST_DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16}


def read_safetensors(path: str | os.PathLike) -> dict[str, np.ndarray]:
    data = Path(path).read_bytes()
    if len(data) < 8:
        raise ConversionError(f"{path}: shorter than 8 bytes, not a safetensors file")
    (n,) = struct.unpack("<Q", data[:8])
    if 8 + n > len(data):
        raise ConversionError(f"{path}: header length {n} exceeds the file size {len(data)}")
    header = json.loads(data[8:8 + n])
    body = memoryview(data)[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        dtype, shape = info["dtype"], tuple(info["shape"])
        raw = bytes(body[begin:end])
        if dtype == "BF16":
            arr = (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32)
        elif dtype in _ST_DTYPES:
            arr = np.frombuffer(raw, np.dtype(_ST_DTYPES[dtype]).newbyteorder("<"))
        else:
            raise ConversionError(f"{path}: tensor '{name}' has unsupported dtype {dtype}")
        out[name] = arr.astype(np.float32).reshape(shape)
    return out


def write_safetensors(path: str | os.PathLike, tensors: dict[str, np.ndarray]) -> None:
    header, offset, blobs = {}, 0, []
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name], dtype="<f4")
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
        blobs.append(a.tobytes())
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-(8 + len(text)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


# ---------------------------------------------------------------- hybgen CLI

def find_hybgen(explicit: str | None = None) -> str:
    """--hybgen, else $HYBGEN, else build-peers/hybgen, build/hybgen, PATH."""
    for cand in [explicit, os.environ.get("HYBGEN"), REPO / "build-peers" / "hybgen", REPO / "build" / "hybgen",
                 shutil.which("hybgen")]:
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return str(cand)
    raise ConversionError("cannot find the hybgen binary (pass --hybgen or set $HYBGEN)")


def hybgen_json(hybgen: str, *args: str) -> object:
    r = subprocess.run([hybgen, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise ConversionError(f"hybgen {' '.join(args)} failed:\n{r.stderr.strip()}")
    return json.loads(r.stdout)


# ---------------------------------------------------------------- defaults

# Attribute defaults of the ops converted here, as `hybgen ops` lists them.
DEFAULTS = {
    "FullyConnected": {"no_bias": False, "flatten": True},
    "Convolution": {"stride": [], "dilate": [], "pad": [], "pad_end": [], "num_group": 1, "no_bias": False,
                    "layout": "None"},
    "Deconvolution": {"stride": [], "dilate": [], "pad": [], "pad_end": [], "adj": [], "target_shape": [],
                      "num_group": 1, "no_bias": True},
    "UpSampling": {"num_filter": 0, "num_args": 0, "multi_input_mode": "concat"},
    "_contrib_BilinearResize2D": {"height": 1, "width": 1, "scale_height": 0.0, "scale_width": 0.0, "mode": "size",
                                  "align_corners": True},
    "LeakyReLU": {"act_type": "leaky", "slope": 0.25, "lower_bound": 0.125, "upper_bound": 0.334},
    "BatchNorm": {"eps": 1e-3, "fix_gamma": True, "axis": 1},
    "LayerNorm": {"axis": -1, "eps": 1e-5},
    "Pooling": {"kernel": [], "pool_type": "max", "global_pool": False, "pooling_convention": "valid",
                "stride": [], "pad": [], "pad_end": [], "count_include_pad": True, "layout": "None"},
    "Concat": {"dim": 1},
    "RNN": {"bidirectional": False, "p": 0.0, "state_outputs": False, "projection_size": 0,
            "lstm_state_clip_min": "None", "lstm_state_clip_max": "None", "use_sequence_length": False},
    "SwapAxis": {"dim1": 0, "dim2": 0},
    "softmax": {"axis": -1, "temperature": 1.0, "use_length": False},
    "log_softmax": {"axis": -1, "temperature": 1.0, "use_length": False},
    "SoftmaxActivation": {"mode": "instance"},
    "SoftmaxOutput": {"multi_output": False, "preserve_shape": False},
    "transpose": {"axes": []},
    "batch_dot": {"transpose_a": False, "transpose_b": False},
    "dot": {"transpose_a": False, "transpose_b": False},
    "sum": {"axis": [], "keepdims": False, "exclude": False},
    "mean": {"axis": [], "keepdims": False, "exclude": False},
    "squeeze": {"axis": []},
    "SliceChannel": {"axis": 1, "squeeze_axis": False},
    "slice": {"step": []},
    "slice_axis": {"end": None},
}

SELU_LAMBDA = 1.0507009873554804934193349852946
SELU_ALPHA = 1.6732632423543772848170429916717


def norm_axis(axis: int, rank: int, node: str) -> int:
    if not -rank <= axis < rank:
        raise ConversionError(f"node '{node}': axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


# ---------------------------------------------------------------- converter

class Converter:
    def __init__(self, model: dict, weights: dict[str, np.ndarray], node_shapes: dict[str, list[int]],
                 aliases: dict[str, str]):
        from onnx import TensorProto, helper, numpy_helper  # noqa: F401  (imported here: --help works without onnx)
        self.helper, self.numpy_helper, self.TensorProto = helper, numpy_helper, TensorProto
        self.model, self.aliases = model, aliases
        self.weights = weights
        self.shapes: dict[str, tuple[int, ...]] = {}
        for i in model["inputs"]:
            self.shapes[i["name"]] = tuple(i["shape"])
        for w in model.get("weights", []):
            self.shapes[w["name"]] = tuple(w["shape"])
        self.node_shapes = node_shapes  # node name -> its first output's shape (hybgen inspect)
        self.nodes, self.inits, self.init_names, self.counter = [], [], set(), 0

    # helpers
    def fresh(self, base: str) -> str:
        self.counter += 1
        return f"{base}__onnx{self.counter}"

    def const(self, base: str, value, dtype=np.float32) -> str:
        name = self.fresh(base)
        self.inits.append(self.numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def ints(self, base: str, values) -> str:
        return self.const(base, np.asarray(list(values), dtype=np.int64), np.int64)

    def add(self, op: str, inputs: list[str], outputs: list[str] | None = None, base: str = "", **attrs) -> str:
        outs = outputs or [self.fresh(base or op)]
        self.nodes.append(self.helper.make_node(op, inputs, outs, name=self.fresh(base or op), **attrs))
        return outs[0]

    def shape(self, value: str) -> tuple[int, ...]:
        return self.shapes[value]

    def weight(self, value: str) -> np.ndarray | None:
        return self.weights.get(value)

    # the walk
    def convert(self):
        helper = self.helper
        for w in self.model.get("weights", []):
            arr = self.weights[w["name"]]
            self.inits.append(self.numpy_helper.from_array(arr.astype(np.float32), w["name"]))
        for node in topo_order(self.model):
            op = self.aliases.get(node["op"], node["op"])
            attrs = dict(DEFAULTS.get(op, {}))
            attrs.update(node.get("attrs", {}))
            outs = node.get("outputs") or [node["name"]]
            fn = getattr(self, "op_" + op.lstrip("_"), None)
            if fn is None:
                raise ConversionError(f"node '{node['name']}': op {node['op']} has no ONNX conversion here")
            try:
                out_shapes = fn(node, node["inputs"], outs, attrs)
            except ConversionError as e:
                msg = str(e)
                raise ConversionError(msg if msg.startswith("node '") else f"node '{node['name']}' ({op}): {msg}")
            except (KeyError, IndexError, ValueError) as e:
                raise ConversionError(f"node '{node['name']}' ({op}): cannot convert: {e!r}")
            for o, s in zip(outs, out_shapes):
                if s is not None:
                    self.shapes[o] = tuple(s)
        inputs = [helper.make_tensor_value_info(i["name"], self.TensorProto.FLOAT, list(i["shape"]))
                  for i in self.model["inputs"]]
        outputs = [helper.make_tensor_value_info(o, self.TensorProto.FLOAT, list(self.shapes[o]))
                   for o in self.model["outputs"]]
        self.drop_dead_nodes()
        used = {v for n in self.nodes for v in n.input}  # weights replaced by a transposed copy drop out
        inits = [i for i in self.inits if i.name in used]
        graph = helper.make_graph(self.nodes, self.model.get("name", "hybgen"), inputs, outputs, inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="hybgen-to_onnx")
        m.ir_version = 8  # opset 17's IR version: readable by older runtimes too
        return m

    def drop_dead_nodes(self):
        """Nodes no output depends on (the Reshape/Concat of RNN weights that
        op_RNN read as constants, unused RNN states) are left out."""
        live = {o for o in self.model["outputs"]}
        kept = []
        for n in reversed(self.nodes):
            if any(o in live for o in n.output):
                kept.append(n)
                live.update(n.input)
        self.nodes = kept[::-1]

    def out_shape(self, node: dict, fallback=None) -> tuple[int, ...]:
        s = self.node_shapes.get(node["name"])
        if s is not None:
            return tuple(s)
        if fallback is None:
            raise ConversionError(f"node '{node['name']}': hybgen inspect gave no output shape")
        return tuple(fallback)

    def only_first_output_used(self, node, outs):
        if len(outs) > 1:
            used = {v for n in self.model["nodes"] for v in n["inputs"]} | set(self.model["outputs"])
            extra = [o for o in outs[1:] if o in used]
            if extra:
                raise ConversionError(f"node '{node['name']}': outputs {extra} (mean/var) cannot be converted")

    # ---- ops; each returns the shapes of the node's outputs

    def op_FullyConnected(self, node, ins, outs, a):
        x, w = ins[0], ins[1]
        xs = self.shape(x)
        hidden = a["num_hidden"]
        bias = None if a["no_bias"] else ins[2]
        if a["flatten"]:
            if len(xs) != 2:
                x = self.add("Flatten", [x], base=node["name"], axis=1)
            gin = [x, w] + ([bias] if bias else [])
            self.add("Gemm", gin, [outs[0]], base=node["name"], transB=1)
            return [(xs[0], hidden)]
        wt = self.weight(w)
        if wt is not None:
            w_t = self.const(w + "_T", np.ascontiguousarray(wt.T))
        else:
            w_t = self.add("Transpose", [w], base=node["name"], perm=[1, 0])
        if bias:
            y = self.add("MatMul", [x, w_t], base=node["name"])
            self.add("Add", [y, bias], [outs[0]], base=node["name"])
        else:
            self.add("MatMul", [x, w_t], [outs[0]], base=node["name"])
        return [xs[:-1] + (hidden,)]

    def op_Convolution(self, node, ins, outs, a):
        if a["layout"] not in ("None", "NCW", "NCHW", "NCDHW"):  # channels first, as ONNX's Conv
            raise ConversionError(f"layout {a['layout']} is not supported")
        k = list(a["kernel"])
        nd = len(k)
        stride = list(a["stride"]) or [1] * nd
        dilate = list(a["dilate"]) or [1] * nd
        pad = list(a["pad"]) or [0] * nd
        pad_end = list(a["pad_end"]) or pad  # ONNX's asymmetric pads
        cin = ins[:2] if a["no_bias"] else ins[:3]
        self.add("Conv", cin, [outs[0]], base=node["name"], kernel_shape=k, strides=stride, dilations=dilate,
                 pads=pad + pad_end, group=int(a["num_group"]))
        xs = self.shape(ins[0])
        sp = [(xs[2 + i] + pad[i] + pad_end[i] - dilate[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
        return [self.out_shape(node, (xs[0], a["num_filter"], *sp))]

    def _conv_transpose(self, node, ins, outs, xs, k, stride, dilate, pad, adj, group, filters, pad_end=None):
        nd = len(k)
        pad_end = pad_end or pad
        self.add("ConvTranspose", list(ins), [outs[0]], base=node["name"], kernel_shape=k, strides=stride,
                 dilations=dilate, pads=pad + pad_end, output_padding=adj, group=int(group))
        sp = [stride[i] * (xs[2 + i] - 1) + dilate[i] * (k[i] - 1) + 1 - pad[i] - pad_end[i] + adj[i]
              for i in range(nd)]
        return [self.out_shape(node, (xs[0], filters, *sp))]

    def op_Deconvolution(self, node, ins, outs, a):
        k = list(a["kernel"])
        nd = len(k)
        xs = self.shape(ins[0])
        stride = list(a["stride"]) or [1] * nd
        dilate = list(a["dilate"]) or [1] * nd
        pad = list(a["pad"]) or [0] * nd
        adj = list(a["adj"]) or [0] * nd
        target = list(a["target_shape"])
        if any(t != 0 for t in target):  # MXNet derives pad and adj from the target size
            for i in range(nd):
                extra = stride[i] * (xs[2 + i] - 1) + dilate[i] * (k[i] - 1) + 1 - target[i]
                pad[i], adj[i] = (extra + 1) // 2, extra % 2
        pad_end = None if any(t != 0 for t in target) else list(a["pad_end"]) or None
        cin = ins[:2] if a["no_bias"] else ins[:3]
        return self._conv_transpose(node, cin, outs, xs, k, stride, dilate, pad, adj, a["num_group"],
                                    a["num_filter"], pad_end)

    def _resize(self, base, x, sizes, out=None, **attrs):
        empty = ""
        return self.add("Resize", [x, empty, empty, self.ints(base + "_sizes", sizes)], [out] if out else None,
                        base=base, **attrs)

    def op_UpSampling(self, node, ins, outs, a):
        n, s = node["name"], int(a["scale"])
        xs = self.shape(ins[0])
        if a["sample_type"] == "bilinear":
            k, p = 2 * s - s % 2, s // 2
            return self._conv_transpose(node, ins[:2], outs, xs, [k, k], [s, s], [1, 1], [p, p], [0, 0], xs[1],
                                        xs[1])
        oh, ow = xs[2] * s, xs[3] * s
        nearest = dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor")
        if len(ins) == 1:
            self._resize(n, ins[0], [xs[0], xs[1], oh, ow], outs[0], **nearest)
            return [(xs[0], xs[1], oh, ow)]
        parts = [self._resize(n, i, [xs[0], self.shape(i)[1], oh, ow], **nearest) for i in ins]
        if a["multi_input_mode"] == "sum":
            self.add("Sum", parts, [outs[0]], base=n)
            return [(xs[0], xs[1], oh, ow)]
        self.add("Concat", parts, [outs[0]], base=n, axis=1)
        return [(xs[0], sum(self.shape(i)[1] for i in ins), oh, ow)]

    def op_contrib_BilinearResize2D(self, node, ins, outs, a):
        xs = self.shape(ins[0])
        shape = self.out_shape(node)
        mode = "align_corners" if a["align_corners"] else "pytorch_half_pixel"
        self._resize(node["name"], ins[0], [xs[0], xs[1], shape[2], shape[3]], outs[0], mode="linear",
                     coordinate_transformation_mode=mode)
        return [shape]

    def op_Activation(self, node, ins, outs, a):
        table = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "softrelu": "Softplus", "softsign": "Softsign"}
        t = a["act_type"]
        if t not in table:
            raise ConversionError(f"act_type {t} is not supported")
        self.add(table[t], [ins[0]], [outs[0]], base=node["name"])
        return [self.shape(ins[0])]

    def op_LeakyReLU(self, node, ins, outs, a):
        t, x, n = a["act_type"], ins[0], node["name"]
        xs = self.shape(x)
        if t in ("leaky", "rrelu"):
            slope = a["slope"] if t == "leaky" else (a["lower_bound"] + a["upper_bound"]) / 2
            self.add("LeakyRelu", [x], [outs[0]], base=n, alpha=float(slope))
        elif t == "elu":
            self.add("Elu", [x], [outs[0]], base=n, alpha=float(a["slope"]))
        elif t == "selu":
            self.add("Selu", [x], [outs[0]], base=n, alpha=SELU_ALPHA, gamma=SELU_LAMBDA)
        elif t == "gelu":  # the exact erf form; opset 17 has no Gelu (ONNX Runtime fuses this pattern)
            h = self.add("Mul", [x, self.const(n + "_rsqrt2", np.float32(1 / math.sqrt(2)))], base=n)
            h = self.add("Erf", [h], base=n)
            h = self.add("Add", [h, self.const(n + "_one", np.float32(1))], base=n)
            h = self.add("Mul", [x, h], base=n)
            self.add("Mul", [h, self.const(n + "_half", np.float32(0.5))], [outs[0]], base=n)
        elif t == "prelu":
            g = ins[1]
            count = int(np.prod(self.shape(g)))
            target = [count] + [1] * (len(xs) - 2) if len(xs) >= 2 and count != 1 else [count]
            gw = self.weight(g)
            if gw is not None:
                slope = self.const(g + "_slope", gw.reshape(target))
            else:
                slope = self.add("Reshape", [g, self.ints(n + "_shape", target)], base=n)
            self.add("PRelu", [x, slope], [outs[0]], base=n)
        else:
            raise ConversionError(f"act_type {t} is not supported")
        return [xs]

    def _channel_shape(self, rank: int, axis: int, c: int) -> list[int]:
        return [c] + [1] * (rank - axis - 1)

    def op_BatchNorm(self, node, ins, outs, a):
        self.only_first_output_used(node, outs)
        x, gamma, beta, mean, var = ins[:5]
        n, xs = node["name"], self.shape(ins[0])
        axis = norm_axis(a["axis"], len(xs), n)
        c = xs[axis]
        if a["fix_gamma"]:
            gamma = self.const(n + "_gamma_fixed", np.ones(c, np.float32))
        eps = float(a["eps"])
        if axis == 1 and len(xs) >= 2:
            self.add("BatchNormalization", [x, gamma, beta, mean, var], [outs[0]], base=n, epsilon=eps)
        else:  # channel axis elsewhere: y = x * scale + shift, both broadcast along the axis
            vals = [self.weight(v) for v in (gamma, beta, mean, var)]
            if a["fix_gamma"]:
                vals[0] = np.ones(c, np.float32)
            if any(v is None for v in vals):
                raise ConversionError(f"node '{n}': BatchNorm on axis {axis} needs its statistics as weights")
            g, b, m, v = (np.asarray(t, np.float64) for t in vals)
            scale = g / np.sqrt(v + eps)
            shape = self._channel_shape(len(xs), axis, c)
            h = self.add("Mul", [x, self.const(n + "_scale", scale.reshape(shape))], base=n)
            self.add("Add", [h, self.const(n + "_shift", (b - m * scale).reshape(shape))], [outs[0]], base=n)
        return [xs] + [(c,)] * (len(outs) - 1)

    def op_LayerNorm(self, node, ins, outs, a):
        self.only_first_output_used(node, outs)
        x, gamma, beta = ins[:3]
        n, xs = node["name"], self.shape(x)
        axis = norm_axis(a["axis"], len(xs), n)
        eps = float(a["eps"])
        if axis == len(xs) - 1:
            self.add("LayerNormalization", [x, gamma, beta], [outs[0]], base=n, axis=-1, epsilon=eps)
        else:  # normalised axis not last: spell it out
            mu = self.add("ReduceMean", [x], base=n, axes=[axis], keepdims=1)
            d = self.add("Sub", [x, mu], base=n)
            var = self.add("ReduceMean", [self.add("Mul", [d, d], base=n)], base=n, axes=[axis], keepdims=1)
            std = self.add("Sqrt", [self.add("Add", [var, self.const(n + "_eps", np.float32(eps))], base=n)], base=n)
            h = self.add("Div", [d, std], base=n)
            shape = self.ints(n + "_cshape", self._channel_shape(len(xs), axis, xs[axis]))
            g = self.add("Reshape", [gamma, shape], base=n)
            b = self.add("Reshape", [beta, shape], base=n)
            self.add("Add", [self.add("Mul", [h, g], base=n), b], [outs[0]], base=n)
        return [xs] + [None] * (len(outs) - 1)  # mean/var: never read (checked above)

    def op_Pooling(self, node, ins, outs, a):
        if a["layout"] not in ("None", "NCHW") or len(self.shape(ins[0])) != 4:
            raise ConversionError(f"layout {a['layout']} is not supported")
        x, n, xs = ins[0], node["name"], self.shape(ins[0])
        t = a["pool_type"]
        if a["global_pool"]:
            if t == "sum":
                self.add("ReduceSum", [x, self.ints(n + "_axes", [2, 3])], [outs[0]], base=n, keepdims=1)
            else:
                self.add("GlobalMaxPool" if t == "max" else "GlobalAveragePool", [x], [outs[0]], base=n)
            return [(xs[0], xs[1], 1, 1)]
        k = list(a["kernel"])
        stride = list(a["stride"]) or [1, 1]
        pad = list(a["pad"]) or [0, 0]
        pad_end = list(a["pad_end"]) or pad
        full = a["pooling_convention"] == "full"
        common = dict(kernel_shape=k, strides=stride, pads=pad + pad_end, ceil_mode=1 if full else 0)
        if t == "max":
            self.add("MaxPool", [x], [outs[0]], base=n, **common)
        elif t == "avg":
            self.add("AveragePool", [x], [outs[0]], base=n, count_include_pad=1 if a["count_include_pad"] else 0,
                     **common)
        elif t == "sum":
            if full:
                raise ConversionError("sum pooling with pooling_convention full is not supported")
            h = self.add("AveragePool", [x], base=n, count_include_pad=1, **common)
            self.add("Mul", [h, self.const(n + "_area", np.float32(k[0] * k[1]))], [outs[0]], base=n)
        else:
            raise ConversionError(f"pool_type {t} is not supported")

        def size(i):
            span = xs[2 + i] + pad[i] + pad_end[i] - k[i]
            return (-(-span // stride[i]) if full else span // stride[i]) + 1

        return [self.out_shape(node, (xs[0], xs[1], size(0), size(1)))]

    def op_Flatten(self, node, ins, outs, a):
        xs = self.shape(ins[0])
        self.add("Flatten", [ins[0]], [outs[0]], base=node["name"], axis=1)
        return [(xs[0], int(np.prod(xs[1:])))]

    def op_Reshape(self, node, ins, outs, a):
        shape = self.out_shape(node)
        if int(np.prod(shape)) != int(np.prod(self.shape(ins[0]))):
            raise ConversionError(f"output shape {shape} does not hold the input {self.shape(ins[0])}")
        self.add("Reshape", [ins[0], self.ints(node["name"] + "_shape", shape)], [outs[0]], base=node["name"])
        return [shape]

    def op_Concat(self, node, ins, outs, a):
        xs = self.shape(ins[0])
        axis = norm_axis(a["dim"], len(xs), node["name"])
        self.add("Concat", list(ins), [outs[0]], base=node["name"], axis=axis)
        s = list(xs)
        s[axis] = sum(self.shape(i)[axis] for i in ins)
        return [tuple(s)]

    def _binary(self, onnx_op, node, ins, outs):
        self.add(onnx_op, [ins[0], ins[1]], [outs[0]], base=node["name"])
        return [tuple(np.broadcast_shapes(self.shape(ins[0]), self.shape(ins[1])))]

    def op_broadcast_add(self, node, ins, outs, a):
        return self._binary("Add", node, ins, outs)

    def op_broadcast_sub(self, node, ins, outs, a):
        return self._binary("Sub", node, ins, outs)

    def op_broadcast_mul(self, node, ins, outs, a):
        return self._binary("Mul", node, ins, outs)

    def op_broadcast_div(self, node, ins, outs, a):
        return self._binary("Div", node, ins, outs)

    def op_broadcast_maximum(self, node, ins, outs, a):
        return self._binary("Max", node, ins, outs)

    def op_broadcast_minimum(self, node, ins, outs, a):
        return self._binary("Min", node, ins, outs)

    def _scalar(self, onnx_op, node, ins, outs, a, reverse=False):
        s = self.const(node["name"] + "_scalar", np.float32(a.get("scalar", 1.0)))
        args = [s, ins[0]] if reverse else [ins[0], s]
        self.add(onnx_op, args, [outs[0]], base=node["name"])
        return [self.shape(ins[0])]

    def op_plus_scalar(self, node, ins, outs, a):
        return self._scalar("Add", node, ins, outs, a)

    def op_minus_scalar(self, node, ins, outs, a):
        return self._scalar("Sub", node, ins, outs, a)

    def op_rminus_scalar(self, node, ins, outs, a):
        return self._scalar("Sub", node, ins, outs, a, reverse=True)

    def op_mul_scalar(self, node, ins, outs, a):
        return self._scalar("Mul", node, ins, outs, a)

    def op_div_scalar(self, node, ins, outs, a):
        return self._scalar("Div", node, ins, outs, a)

    def op_rdiv_scalar(self, node, ins, outs, a):
        return self._scalar("Div", node, ins, outs, a, reverse=True)

    def op_maximum_scalar(self, node, ins, outs, a):
        return self._scalar("Max", node, ins, outs, a)

    def op_minimum_scalar(self, node, ins, outs, a):
        return self._scalar("Min", node, ins, outs, a)

    def op_clip(self, node, ins, outs, a):
        n = node["name"]
        lo = self.const(n + "_min", np.float32(a["a_min"]))
        hi = self.const(n + "_max", np.float32(a["a_max"]))
        self.add("Clip", [ins[0], lo, hi], [outs[0]], base=n)
        return [self.shape(ins[0])]

    def _softmax(self, onnx_op, node, ins, outs, a):
        if a.get("use_length"):
            raise ConversionError("use_length=true is not supported")
        x, n = ins[0], node["name"]
        t = float(a.get("temperature", 1.0))
        if t != 1.0:
            x = self.add("Div", [x, self.const(n + "_temperature", np.float32(t))], base=n)
        self.add(onnx_op, [x], [outs[0]], base=n, axis=int(a["axis"]))
        return [self.shape(ins[0])]

    def op_softmax(self, node, ins, outs, a):
        return self._softmax("Softmax", node, ins, outs, a)

    def op_log_softmax(self, node, ins, outs, a):
        return self._softmax("LogSoftmax", node, ins, outs, a)

    def _flat_softmax(self, node, ins, outs):  # softmax over everything after axis 0
        x, n, xs = ins[0], node["name"], self.shape(ins[0])
        if len(xs) == 2:
            self.add("Softmax", [x], [outs[0]], base=n, axis=1)
        else:
            h = self.add("Softmax", [self.add("Flatten", [x], base=n, axis=1)], base=n, axis=1)
            self.add("Reshape", [h, self.ints(n + "_shape", xs)], [outs[0]], base=n)
        return [xs]

    def op_SoftmaxActivation(self, node, ins, outs, a):
        if a["mode"] == "channel":
            self.add("Softmax", [ins[0]], [outs[0]], base=node["name"], axis=1)
            return [self.shape(ins[0])]
        return self._flat_softmax(node, ins, outs)

    def op_SoftmaxOutput(self, node, ins, outs, a):
        if a["preserve_shape"] or a["multi_output"]:
            self.add("Softmax", [ins[0]], [outs[0]], base=node["name"], axis=-1 if a["preserve_shape"] else 1)
            return [self.shape(ins[0])]
        return self._flat_softmax(node, ins, outs)

    def op_Dropout(self, node, ins, outs, a):
        if a.get("mode") == "always":
            raise ConversionError("Dropout mode=always is random at inference; not converted")
        self.add("Identity", [ins[0]], [outs[0]], base=node["name"])
        return [self.shape(ins[0])]

    def op_copy(self, node, ins, outs, a):
        self.add("Identity", [ins[0]], [outs[0]], base=node["name"])
        return [self.shape(ins[0])]

    def op_transpose(self, node, ins, outs, a):
        xs = self.shape(ins[0])
        perm = [norm_axis(p, len(xs), node["name"]) for p in a["axes"]] or list(reversed(range(len(xs))))
        self.add("Transpose", [ins[0]], [outs[0]], base=node["name"], perm=perm)
        return [tuple(xs[p] for p in perm)]

    def _matmul(self, node, ins, outs, a, batched):
        n = node["name"]
        x, y = ins[0], ins[1]
        xs, ys = self.shape(x), self.shape(y)
        if a["transpose_a"]:
            perm = [0, 2, 1] if batched else [1, 0]
            if not batched and len(xs) != 2:
                raise ConversionError("dot with transpose_a needs a 2-D left operand")
            x = self.add("Transpose", [x], base=n, perm=perm)
            xs = tuple(xs[p] for p in perm)
        if a["transpose_b"]:
            perm = [0, 2, 1] if batched else [1, 0]
            w = self.weight(y)
            if w is not None:
                y = self.const(y + "_T", np.ascontiguousarray(np.transpose(w, perm)))
            else:
                y = self.add("Transpose", [y], base=n, perm=perm)
            ys = tuple(ys[p] for p in perm)
        if not batched and len(ys) != 2:
            raise ConversionError("dot needs a 2-D right operand")
        self.add("MatMul", [x, y], [outs[0]], base=n)
        return [(xs[0], xs[1], ys[2]) if batched else xs[:-1] + (ys[1],)]

    def op_batch_dot(self, node, ins, outs, a):
        return self._matmul(node, ins, outs, a, True)

    def op_dot(self, node, ins, outs, a):
        return self._matmul(node, ins, outs, a, False)

    def _reduce(self, onnx_op, node, ins, outs, a):
        xs, n = self.shape(ins[0]), node["name"]
        listed = {norm_axis(ax, len(xs), n) for ax in a["axis"]}
        if a["exclude"]:
            axes = [i for i in range(len(xs)) if i not in listed]
        else:
            axes = sorted(listed) if listed else list(range(len(xs)))
        keep = 1 if a["keepdims"] else 0
        if not axes:
            self.add("Identity", [ins[0]], [outs[0]], base=n)
            return [xs]
        if onnx_op == "ReduceSum":  # opset 13+: axes are an input
            self.add("ReduceSum", [ins[0], self.ints(n + "_axes", axes)], [outs[0]], base=n, keepdims=keep)
        else:  # ReduceMean takes them as an attribute up to opset 17
            self.add("ReduceMean", [ins[0]], [outs[0]], base=n, axes=axes, keepdims=keep)
        return [tuple(1 if i in axes else d for i, d in enumerate(xs) if keep or i not in axes)]

    def op_sum(self, node, ins, outs, a):
        return self._reduce("ReduceSum", node, ins, outs, a)

    def op_mean(self, node, ins, outs, a):
        return self._reduce("ReduceMean", node, ins, outs, a)

    def op_expand_dims(self, node, ins, outs, a):
        xs = list(self.shape(ins[0]))
        axis = norm_axis(a["axis"], len(xs) + 1, node["name"])
        self.add("Unsqueeze", [ins[0], self.ints(node["name"] + "_axes", [axis])], [outs[0]], base=node["name"])
        xs.insert(axis, 1)
        return [tuple(xs)]

    def op_squeeze(self, node, ins, outs, a):
        xs = self.shape(ins[0])
        axes = sorted({norm_axis(ax, len(xs), node["name"]) for ax in a["axis"]}) or \
            [i for i, d in enumerate(xs) if d == 1]
        if not axes:
            self.add("Identity", [ins[0]], [outs[0]], base=node["name"])
            return [xs]
        self.add("Squeeze", [ins[0], self.ints(node["name"] + "_axes", axes)], [outs[0]], base=node["name"])
        return [tuple(d for i, d in enumerate(xs) if i not in axes)]

    def _unary(self, onnx_op, node, ins, outs):
        self.add(onnx_op, [ins[0]], [outs[0]], base=node["name"])
        return [self.shape(ins[0])]

    def op_erf(self, node, ins, outs, a):
        return self._unary("Erf", node, ins, outs)

    def op_exp(self, node, ins, outs, a):
        return self._unary("Exp", node, ins, outs)

    def op_log(self, node, ins, outs, a):
        return self._unary("Log", node, ins, outs)

    def op_sqrt(self, node, ins, outs, a):
        return self._unary("Sqrt", node, ins, outs)

    def op_abs(self, node, ins, outs, a):
        return self._unary("Abs", node, ins, outs)

    def op_negative(self, node, ins, outs, a):
        return self._unary("Neg", node, ins, outs)

    def op_rsqrt(self, node, ins, outs, a):
        h = self.add("Sqrt", [ins[0]], base=node["name"])
        self.add("Reciprocal", [h], [outs[0]], base=node["name"])
        return [self.shape(ins[0])]

    def op_square(self, node, ins, outs, a):
        self.add("Mul", [ins[0], ins[0]], [outs[0]], base=node["name"])
        return [self.shape(ins[0])]

    def op_SliceChannel(self, node, ins, outs, a):
        xs, n = self.shape(ins[0]), node["name"]
        axis = norm_axis(a["axis"], len(xs), n)
        parts = int(a["num_outputs"])
        if parts <= 0 or xs[axis] % parts or len(outs) != parts:
            raise ConversionError(f"cannot split axis {axis} of {xs} into {parts} equal parts for {len(outs)} outputs")
        part = xs[axis] // parts
        squeeze = bool(a["squeeze_axis"])
        if squeeze and part != 1:
            raise ConversionError("squeeze_axis needs parts of size 1")
        split_outs = [self.fresh(o) for o in outs] if squeeze else list(outs)
        self.add("Split", [ins[0], self.ints(n + "_split", [part] * parts)], split_outs, base=n, axis=axis)
        shape = list(xs)
        shape[axis] = part
        if squeeze:
            for s, o in zip(split_outs, outs):
                self.add("Squeeze", [s, self.ints(n + "_axes", [axis])], [o], base=n)
            del shape[axis]
        return [tuple(shape)] * parts

    def _slice(self, node, ins, outs, begin, end, step):
        """MXNet slice semantics (None = default bound) resolved against the known input shape."""
        xs, n = self.shape(ins[0]), node["name"]
        if len(begin) != len(end) or len(begin) > len(xs) or (step and len(step) != len(begin)):
            raise ConversionError(f"begin {begin}, end {end} and step {step} do not fit the input {xs}")
        starts, ends, axes, steps, out = [], [], [], [], []
        for i, dim in enumerate(xs):
            s = step[i] if i < len(step) and step[i] is not None else 1
            if s == 0:
                raise ConversionError(f"step 0 on axis {i}")
            b, e = (0, dim) if s > 0 else (dim - 1, -1)
            if i < len(begin) and begin[i] is not None:
                b = begin[i] + dim if begin[i] < 0 else begin[i]
                b = min(max(b, 0), dim) if s > 0 else min(max(b, -1), dim - 1)
            if i < len(end) and end[i] is not None:
                e = end[i] + dim if end[i] < 0 else end[i]
                e = min(max(e, 0), dim) if s > 0 else min(max(e, -1), dim - 1)
            count = max(0, (e - b + s - 1) // s) if s > 0 else max(0, (b - e - s - 1) // -s)
            if count == 0:
                raise ConversionError(f"axis {i} slices to nothing")
            out.append(count)
            if (b, e, s) != (0, dim, 1):
                starts.append(b)
                ends.append(e if e >= 0 else -(2 ** 62))  # -1 with a negative step: past the front
                axes.append(i)
                steps.append(s)
        if not axes:
            self.add("Identity", [ins[0]], [outs[0]], base=n)
        else:
            self.add("Slice", [ins[0], self.ints(n + "_starts", starts), self.ints(n + "_ends", ends),
                               self.ints(n + "_axes", axes), self.ints(n + "_steps", steps)], [outs[0]], base=n)
        return [tuple(out)]

    def op_slice(self, node, ins, outs, a):
        return self._slice(node, ins, outs, list(a["begin"]), list(a["end"]), list(a["step"] or []))

    def op_slice_axis(self, node, ins, outs, a):
        xs = self.shape(ins[0])
        axis = norm_axis(a["axis"], len(xs), node["name"])
        begin, end = [None] * len(xs), [None] * len(xs)
        begin[axis], end[axis] = a["begin"], a["end"]
        return self._slice(node, ins, outs, begin, end, [])

    def const_value(self, value: str) -> np.ndarray | None:
        """The value of `value` when it is a weight, or computed from weights by
        Reshape / Concat / _copy nodes (Gluon's flattened RNN parameters)."""
        w = self.weight(value)
        if w is not None:
            return w
        for n in self.model["nodes"]:
            if value not in (n.get("outputs") or [n["name"]]):
                continue
            op = self.aliases.get(n["op"], n["op"])
            parts = [self.const_value(i) for i in n["inputs"]]
            if any(p is None for p in parts):
                return None
            if op == "Reshape":
                return parts[0].reshape(self.out_shape(n))
            if op == "_copy":
                return parts[0]
            if op == "Concat":
                return np.concatenate(parts, axis=int(n.get("attrs", {}).get("dim", 1)))
            return None
        return None

    def op_SwapAxis(self, node, ins, outs, a):
        xs = self.shape(ins[0])
        d1, d2 = norm_axis(a["dim1"], len(xs), node["name"]), norm_axis(a["dim2"], len(xs), node["name"])
        perm = list(range(len(xs)))
        perm[d1], perm[d2] = perm[d2], perm[d1]
        self.add("Transpose", [ins[0]], [outs[0]], base=node["name"], perm=perm)
        return [tuple(xs[p] for p in perm)]

    def op_RNN(self, node, ins, outs, a):
        """MXNet's fused RNN as one ONNX LSTM / GRU / RNN per layer. Gate blocks
        reordered: MXNet LSTM i,f,g,o -> ONNX i,o,f,c; GRU r,z,n -> z,r,h with
        linear_before_reset=1 (MXNet applies r to W_hn h + b_hn)."""
        n = node["name"]
        mode, H, L = a["mode"], int(a["state_size"]), int(a["num_layers"])
        D = 2 if a["bidirectional"] else 1
        for key in ("projection_size", "use_sequence_length"):
            if a[key] not in (0, False, None, "None"):
                raise ConversionError(f"{key} is not converted")
        T, N, C = self.shape(ins[0])
        G = {"lstm": 4, "gru": 3}.get(mode, 1)
        order = {"lstm": [0, 3, 1, 2], "gru": [1, 0, 2]}.get(mode, [0])
        params = self.const_value(ins[1])
        if params is None:
            raise ConversionError("the RNN parameters must be constants (weights, reshaped or concatenated)")
        params = params.reshape(-1)
        states = [self.const_value(i) for i in ins[2:]]

        def reorder(m):  # (G*H, ...) in MXNet's gate order -> ONNX's
            blocks = m.reshape((G, H) + m.shape[1:])
            return blocks[order].reshape(m.shape)

        offset, w_parts = 0, []
        for layer in range(L):
            I = C if layer == 0 else D * H
            dirs = []
            for _ in range(D):
                wi = params[offset:offset + G * H * I].reshape(G * H, I)
                offset += G * H * I
                wh = params[offset:offset + G * H * H].reshape(G * H, H)
                offset += G * H * H
                dirs.append((wi, wh))
            w_parts.append(dirs)
        biases = []
        for layer in range(L):
            dirs = []
            for _ in range(D):
                bi = params[offset:offset + G * H]
                bh = params[offset + G * H:offset + 2 * G * H]
                offset += 2 * G * H
                dirs.append((bi, bh))
            biases.append(dirs)
        if offset != params.size:
            raise ConversionError(f"parameters hold {params.size} values, the layers {offset}")
        onnx_op = {"lstm": "LSTM", "gru": "GRU"}.get(mode, "RNN")
        x, hys, cys = ins[0], [], []
        for layer in range(L):
            W = np.stack([reorder(wi) for wi, _ in w_parts[layer]]).astype(np.float32)
            R = np.stack([reorder(wh) for _, wh in w_parts[layer]]).astype(np.float32)
            B = np.stack([np.concatenate([reorder(bi), reorder(bh)]) for bi, bh in biases[layer]]).astype(np.float32)
            inputs = [x, self.const(n + "_W", W), self.const(n + "_R", R), self.const(n + "_B", B), ""]
            for k, st in enumerate(states):
                piece = ins[2 + k] if st is None else None
                if st is not None:
                    inputs.append(self.const(n + f"_state{k}", st[layer * D:(layer + 1) * D]))
                else:
                    inputs.append(self.add("Slice", [piece, self.ints(n + "_b", [layer * D]),
                                                     self.ints(n + "_e", [(layer + 1) * D]), self.ints(n + "_a", [0])],
                                           base=n))
            attrs = {"hidden_size": H, "direction": "bidirectional" if D == 2 else "forward"}
            if mode == "gru":
                attrs["linear_before_reset"] = 1
            if mode in ("rnn_tanh", "rnn_relu"):
                attrs["activations"] = ["Tanh" if mode == "rnn_tanh" else "Relu"] * D
            y, yh = self.fresh(n + "_Y"), self.fresh(n + "_Yh")
            node_outs = [y, yh] + ([self.fresh(n + "_Yc")] if mode == "lstm" else [])
            self.add(onnx_op, inputs, node_outs, base=n, **attrs)
            hys.append(yh)
            if mode == "lstm":
                cys.append(node_outs[2])
            last = layer == L - 1
            if D == 1:
                x = self.add("Squeeze", [y, self.ints(n + "_axes", [1])], [outs[0]] if last else None, base=n)
            else:
                t = self.add("Transpose", [y], base=n, perm=[0, 2, 1, 3])
                x = self.add("Reshape", [t, self.ints(n + "_shape", [T, N, D * H])], [outs[0]] if last else None,
                             base=n)
        shapes = [(T, N, D * H)]
        for k, parts in enumerate([hys, cys][:len(outs) - 1]):
            if L == 1:
                self.add("Identity", parts, [outs[1 + k]], base=n)
            else:
                self.add("Concat", parts, [outs[1 + k]], base=n, axis=0)
            shapes.append((L * D, N, H))
        return shapes

    def op_Embedding(self, node, ins, outs, a):
        n = node["name"]
        idx = self.add("Cast", [ins[0]], base=n, to=self.TensorProto.INT64)
        self.add("Gather", [ins[1], idx], [outs[0]], base=n, axis=0)
        return [self.shape(ins[0]) + (int(a["output_dim"]),)]


def topo_order(model: dict) -> list[dict]:
    producer = {}
    for node in model["nodes"]:
        for o in node.get("outputs") or [node["name"]]:
            producer[o] = node["name"]
    by_name = {n["name"]: n for n in model["nodes"]}
    order, state = [], {}

    for start in model["nodes"]:
        stack = [(start["name"], False)]
        while stack:
            name, done = stack.pop()
            if done:
                state[name] = 2
                order.append(by_name[name])
                continue
            if state.get(name):  # done, or on the current path (a cycle: hybgen rejects those)
                continue
            state[name] = 1
            stack.append((name, True))
            for v in by_name[name]["inputs"]:
                p = producer.get(v)
                if p is not None and not state.get(p):
                    stack.append((p, False))
    return order


def alias_table(hybgen: str) -> dict[str, str]:
    table = {}
    for op in hybgen_json(hybgen, "ops", "--json"):
        table[op["name"]] = op["name"]
        for alias in op.get("aliases", []):
            table[alias] = op["name"]
    return table


def convert(model_json: str, out_onnx: str, weights: str | None = None, hybgen: str | None = None):
    """Writes out_onnx; returns the onnx ModelProto."""
    import onnx

    hybgen = find_hybgen(hybgen)
    model_path = Path(model_json)
    model = json.loads(model_path.read_text())
    if model.get("format") != "hybgen-graph":
        raise ConversionError(f"{model_json}: not a hybgen model (format {model.get('format')!r})")
    wpath = Path(weights) if weights else model_path.with_suffix(".safetensors")
    tensors = read_safetensors(wpath) if model.get("weights") else {}
    for w in model.get("weights", []):
        if w["name"] not in tensors:
            raise ConversionError(f"{model_json}: weight '{w['name']}' is missing from {wpath}")
        if tuple(tensors[w["name"]].shape) != tuple(w["shape"]):
            raise ConversionError(f"{model_json}: weight '{w['name']}' has shape {tensors[w['name']].shape} "
                                  f"in {wpath}, the model says {tuple(w['shape'])}")
    args = ["inspect", "--json", "--no-optimize", str(model_path)]
    if weights:
        args += ["--weights", str(weights)]
    info = hybgen_json(hybgen, *args)
    node_shapes = {n["name"]: n["output_shape"] for n in info["nodes"]}
    m = Converter(model, tensors, node_shapes, alias_table(hybgen)).convert()
    onnx.checker.check_model(m)
    tmp = str(out_onnx) + ".tmp"
    onnx.save(m, tmp)
    os.replace(tmp, out_onnx)
    return m


# ---------------------------------------------------------------- the check

def randomize_norm(model_json: str, out_weights: str, seed: int, weights: str | None = None) -> None:
    """Copy of the weights with BatchNorm/LayerNorm statistics and scales moved off identity."""
    model = json.loads(Path(model_json).read_text())
    tensors = read_safetensors(weights or Path(model_json).with_suffix(".safetensors"))
    rng = np.random.default_rng(seed)
    for name in sorted(tensors):
        if name.endswith(("running_var", "gamma")):
            tensors[name] = rng.uniform(0.5, 1.5, tensors[name].shape).astype(np.float32)
        elif name.endswith(("running_mean", "beta")):
            tensors[name] = rng.uniform(-0.2, 0.2, tensors[name].shape).astype(np.float32)
    keep = {w["name"] for w in model.get("weights", [])}
    write_safetensors(out_weights, {k: v for k, v in tensors.items() if k in keep})


def run_onnxruntime(onnx_path: str, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds)))


def check(model_json: str, onnx_path: str, weights: str | None = None, hybgen: str | None = None,
          tolerance: float = 1e-4, inputs: dict[str, np.ndarray] | None = None, seed: int = 7,
          quiet: bool = False, hybgen_flags: list[str] | None = None) -> dict:
    """ONNX Runtime's outputs against hybgen's generated code via `hybgen verify --expected`
    (hybgen_flags: more of verify's flags, e.g. --external-weights).

    Returns {"ok": bool, "outputs": {name: max_rel_err}, "text": verify's output}."""
    hybgen = find_hybgen(hybgen)
    model = json.loads(Path(model_json).read_text())
    folder = Path(onnx_path).parent
    stem = Path(onnx_path).stem
    rng = np.random.default_rng(seed)
    feeds = {}
    for i in model["inputs"]:
        feeds[i["name"]] = (inputs or {}).get(i["name"])
        if feeds[i["name"]] is None:
            feeds[i["name"]] = rng.standard_normal(i["shape"]).astype(np.float32)
    outs = run_onnxruntime(onnx_path, feeds)
    return verify_expected(hybgen, model_json, feeds, outs, folder / stem, tolerance, quiet,
                           (["--weights", str(weights)] if weights else []) + list(hybgen_flags or []))


def verify_expected(hybgen: str, model: str, feeds: dict[str, np.ndarray], outs: dict[str, np.ndarray],
                    prefix: Path, tolerance: float = 1e-4, quiet: bool = False,
                    hybgen_flags: list[str] | None = None) -> dict:
    """`hybgen verify MODEL --input ... --expected ...` with the inputs `feeds` and the outputs `outs`
    another runtime computed, saved as PREFIX.x.NAME.npy / PREFIX.y.NAME.npy. MODEL is anything
    hybgen reads (model.json, an MXNet symbol file, model.onnx).

    Returns {"ok": bool, "outputs": {name: max_rel_err}, "text": verify's output}."""
    def file_part(name: str) -> str:  # output names may hold '/' or ':' (ONNX)
        return re.sub(r"[^A-Za-z0-9_.-]", "_", name)

    cmd = [hybgen, "verify", str(model), "--tolerance", repr(tolerance)] + list(hybgen_flags or [])
    for name, x in feeds.items():
        p = Path(f"{prefix}.x.{file_part(name)}.npy")
        np.save(p, x)
        cmd += ["--input", f"{name}={p}"]
    for name, y in outs.items():
        p = Path(f"{prefix}.y.{file_part(name)}.npy")
        np.save(p, np.asarray(y, dtype=np.float32, order="C"))  # ascontiguousarray would make 0-d 1-d
        cmd += ["--expected", f"{name}={p}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    text = r.stdout + r.stderr
    if not quiet:
        print("$ " + " ".join(cmd))
        print(text.rstrip())
    errors = {}
    for line in r.stdout.splitlines():  # "NAME  (shape)  abs  rel  OK|FAIL  expected PATH"
        m = re.match(r"(\S+)\s+\(.*?\)\s+(\S+)\s+(\S+)\s+(OK|FAIL)\s+expected ", line)
        if m and m.group(1) in outs:
            errors[m.group(1)] = float(m.group(3))
    return {"ok": r.returncode == 0 and len(errors) == len(outs), "outputs": errors, "text": text.strip()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("model", help="MODEL.json (hybgen's format)")
    ap.add_argument("out", help="OUT.onnx")
    ap.add_argument("--weights", help="weights file (default: the .safetensors beside MODEL.json)")
    ap.add_argument("--hybgen", help="the hybgen binary (default: $HYBGEN, build-peers/hybgen, build/hybgen)")
    ap.add_argument("--check", action="store_true", help="compare ONNX Runtime with hybgen's generated code")
    ap.add_argument("--randomize-norm", type=int, metavar="SEED",
                    help="convert and check with BatchNorm/LayerNorm parameters moved off identity")
    ap.add_argument("--tolerance", type=float, default=1e-4, help="relative tolerance of --check")
    args = ap.parse_args(argv)
    try:
        weights = args.weights
        if args.randomize_norm is not None:
            weights = str(Path(args.out).with_suffix("")) + "-weights.safetensors"
            randomize_norm(args.model, weights, args.randomize_norm, args.weights)
            print(f"wrote {weights} (norm parameters randomized, seed {args.randomize_norm})")
        m = convert(args.model, args.out, weights, args.hybgen)
        ops = sorted({n.op_type for n in m.graph.node})
        print(f"wrote {args.out}: opset {OPSET}, {len(m.graph.node)} nodes ({', '.join(ops)}), "
              f"{len(m.graph.initializer)} initializers")
        if args.check:
            r = check(args.model, args.out, weights, args.hybgen, args.tolerance)
            print(f"check: {'PASS' if r['ok'] else 'FAIL'}")
            return 0 if r["ok"] else 1
        return 0
    except ConversionError as e:
        print(f"to_onnx: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
