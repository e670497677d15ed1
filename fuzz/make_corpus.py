#!/usr/bin/env python3
"""Writes the hand-made part of the seed corpora in fuzz/corpus/ (fuzz/README.md).

    python3 fuzz/make_corpus.py        # from the repository root; rewrites gen-* files

Every file it writes is named gen-*; other files in fuzz/corpus/ (copies of
test data, crash reproducers kept as regressions) are left alone. Standard
library only, deterministic output.
"""
import json
import os
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")


def write(harness, name, data):
    if isinstance(data, str):
        data = data.encode()
    folder = os.path.join(CORPUS, harness)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "gen-" + name), "wb") as f:
        f.write(data)


def f32(values):
    return struct.pack("<%df" % len(values), *values)


def count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


# ---------------------------------------------------------------- .npy

def npy(header, data, major=1, pad=True):
    if pad:  # as np.save does: magic + version + length + header end on 64 bytes
        prefix = 10 if major == 1 else 12
        header += " " * (63 - (prefix + len(header)) % 64) + "\n"
    length = struct.pack("<H", len(header)) if major == 1 else struct.pack("<I", len(header))
    return b"\x93NUMPY" + bytes([major, 0]) + length + header.encode("latin-1") + data


def make_npy():
    d = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }"
    write("npy", "f4-2x3.npy", npy(d % ("<f4", "(2, 3)"), f32([0.5, -1, 2, 3.25, 0, 1e-3])))
    write("npy", "f4-vector.npy", npy(d % ("<f4", "(4,)"), f32([1, 2, 3, 4])))
    write("npy", "f4-scalar.npy", npy(d % ("<f4", "()"), f32([7])))
    write("npy", "f4-empty.npy", npy(d % ("<f4", "(0, 3)"), b""))
    write("npy", "f4-rank4.npy", npy(d % ("<f4", "(1, 2, 1, 2)"), f32([1, 2, 3, 4])))
    write("npy", "f8.npy", npy(d % ("<f8", "(2,)"), struct.pack("<2d", 0.5, -1.25)))
    write("npy", "v2.npy", npy(d % ("<f4", "(1, 2)"), f32([1, 2]), major=2))
    write("npy", "v3.npy", npy(d % ("<f4", "(2,)"), f32([1, 2]), major=3))
    write("npy", "double-quotes.npy",
          npy('{"descr": "<f4", "fortran_order": False, "shape": (2, 1)}', f32([1, 2]), pad=False))
    write("npy", "fortran.npy", npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", f32([1, 2, 3, 4])))
    write("npy", "int32.npy", npy(d % ("<i4", "(2,)"), struct.pack("<2i", 1, 2)))
    write("npy", "structured.npy",
          npy("{'descr': [('x', '<f4'), ('y', '<f4')], 'fortran_order': False, 'shape': (1,), }", f32([1, 2])))
    write("npy", "py2-long.npy", npy(d % ("<f4", "(2L, 1L)"), f32([1, 2])))


# ---------------------------------------------------------------- .safetensors

def safetensors(entries, metadata=None, dtype_data=None):
    """entries: [(name, dtype, shape, data bytes)], laid out in order."""
    header, blob = {}, b""
    for name, dtype, shape, data in entries:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(blob), len(blob) + len(data)]}
        blob += data
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":"))
    text += " " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text.encode() + blob


def make_safetensors():
    write("safetensors", "mlp.safetensors", safetensors([
        ("dense0_bias", "F32", [4], f32([0.1, 0.2, 0.3, 0.4])),
        ("dense0_weight", "F32", [4, 2], f32([1, -1, 2, -2, 3, -3, 4, -4])),
    ]))
    write("safetensors", "metadata.safetensors",
          safetensors([("w", "F32", [2, 2], f32([1, 2, 3, 4]))], metadata={"format": "hybgen"}))
    write("safetensors", "dtypes.safetensors", safetensors([
        ("d", "F64", [2], struct.pack("<2d", 0.5, -2.0)),
        ("h", "F16", [2], struct.pack("<2H", 0x3C00, 0xC000)),
        ("b", "BF16", [2], struct.pack("<2H", 0x3F80, 0x4000)),
    ]))
    write("safetensors", "scalar-and-empty.safetensors", safetensors([
        ("s", "F32", [], f32([3])),
        ("e", "F32", [0, 4], b""),
    ]))
    write("safetensors", "empty-header.safetensors", safetensors([]))
    write("safetensors", "rank4.safetensors", safetensors([("k", "F32", [2, 1, 1, 2], f32([1, 2, 3, 4]))]))
    write("safetensors", "unsupported-dtype.safetensors", safetensors([("i", "I8", [2], b"\x01\x02")]))


# ---------------------------------------------------------------- .params

LIST_MAGIC, V1, V2, V3 = 0x112, 0xF993FAC8, 0xF993FAC9, 0xF993FACA
# MXNet dtype flag -> struct format
FLAGS = {0: "f", 1: "d", 2: "e", 3: "B", 4: "i", 5: "b", 6: "q"}


def record(layout, shape, flag=0, values=None, empty=False):
    out = b""
    if layout in ("v2", "v3"):
        ndim = (0 if layout == "v2" else 0xFFFFFFFF) if empty else len(shape)
        out += struct.pack("<III", V2 if layout == "v2" else V3, 0, ndim)
        if not empty:
            out += b"".join(struct.pack("<Q", d) for d in shape)
    elif layout == "v1":
        out += struct.pack("<II", V1, 0 if empty else len(shape))
        if not empty:
            out += b"".join(struct.pack("<Q", d) for d in shape)
    else:  # legacy: no magic, ndim then uint32 dims
        out += struct.pack("<I", 0 if empty else len(shape))
        if not empty:
            out += b"".join(struct.pack("<I", d) for d in shape)
    if empty:
        return out
    n = count(shape)
    values = values if values is not None else [(i % 7) - (3 if flag != 3 else 0) for i in range(n)]
    return out + struct.pack("<III", 1, 0, flag) + struct.pack("<%d%s" % (n, FLAGS[flag]), *values)


def params(records, names=None):
    names = names if names is not None else [n for n, _ in records]
    out = struct.pack("<QQQ", LIST_MAGIC, 0, len(records))
    out += b"".join(r for _, r in records)
    out += struct.pack("<Q", len(names))
    out += b"".join(struct.pack("<Q", len(n.encode())) + n.encode() for n in names)
    return out


def make_params():
    for layout in ("v1", "v2", "v3", "legacy"):
        write("mxnet_params", "%s.params" % layout, params([
            ("arg:fc_weight", record(layout, [3, 2])),
            ("arg:fc_bias", record(layout, [3])),
            ("aux:bn_moving_var", record(layout, [1], values=[1.0])),
        ]))
    write("mxnet_params", "dtypes.params", params([
        ("arg:f64", record("v2", [2], 1)),
        ("arg:f16", record("v2", [2], 2)),
        ("arg:u8", record("v2", [2], 3)),
        ("arg:i32", record("v2", [2], 4)),
        ("arg:i8", record("v2", [2], 5)),
        ("arg:i64", record("v2", [2], 6)),
    ]))
    write("mxnet_params", "empty-records.params", params([
        ("arg:v2_empty", record("v2", [], empty=True)),
        ("arg:v3_empty", record("v3", [], empty=True)),
        ("arg:v1_empty", record("v1", [], empty=True)),
        ("arg:v3_scalar", record("v3", [])),
    ]))
    write("mxnet_params", "conv.params", params([
        ("arg:conv0_weight", record("v2", [2, 1, 3, 3])),
        ("arg:conv0_bias", record("v2", [2])),
    ]))
    write("mxnet_params", "unnamed.params", params([("", record("v2", [2]))], names=[]))


# ---------------------------------------------------------------- graphs

class G:
    """A small graph written as model.json and as MXNet symbol JSON."""

    def __init__(self, name, input_shape, input_name="data"):
        self.name, self.nodes, self.weights = name, [], []
        self.inputs = [(input_name, input_shape)]
        self.outputs = []

    def w(self, name, shape):
        self.weights.append((name, shape))
        return name

    def op(self, op, inputs, attrs=None, outputs=None, name=None):
        name = name or "%s%d" % (op.lower().strip("_"), len(self.nodes))
        self.nodes.append({"name": name, "op": op, "inputs": list(inputs), "attrs": attrs or {},
                           "outputs": outputs or [name]})
        return (outputs or [name])[0] if not outputs or len(outputs) == 1 else outputs

    def model_json(self):
        nodes = []
        for n in self.nodes:
            node = {"name": n["name"], "op": n["op"], "inputs": n["inputs"], "outputs": n["outputs"]}
            if n["attrs"]:
                node["attrs"] = n["attrs"]
            nodes.append(node)
        doc = {
            "format": "hybgen-graph", "format_version": 1, "name": self.name,
            "inputs": [{"name": n, "shape": s, "dtype": "float32"} for n, s in self.inputs],
            "outputs": self.outputs,
            "weights": [{"name": n, "shape": s, "dtype": "float32"} for n, s in sorted(self.weights)],
            "nodes": nodes,
        }
        return json.dumps(doc, indent=1) + "\n"

    def mxnet_symbol(self, layout):
        """layout: 'attrs' (MXNet >= 1.0), 'attr' (0.9-0.11) or 'param' (0.8, 2-element entries)."""
        def text(v):
            if isinstance(v, bool):
                return "True" if v else "False"
            if isinstance(v, list):
                return "(" + ", ".join("None" if x is None else str(x) for x in v) + ("," if len(v) == 1 else "") + ")"
            return str(v)

        def entry(index, output=0):
            return [index, output] if layout == "param" else [index, output, 0]

        nodes, where, arg_nodes = [], {}, []
        for name, shape in self.inputs:
            where[name] = (len(nodes), 0)
            arg_nodes.append(len(nodes))
            nodes.append({"op": "null", "name": name, layout: {"__shape__": text(shape)}, "inputs": []})
        for name, shape in self.weights:
            where[name] = (len(nodes), 0)
            arg_nodes.append(len(nodes))
            nodes.append({"op": "null", "name": name, layout: {"__shape__": text(shape)}, "inputs": []})
        for n in self.nodes:
            node = {"op": n["op"], "name": n["name"]}
            if n["attrs"]:
                node[layout] = {k: text(v) for k, v in n["attrs"].items()}
            node["inputs"] = [entry(*where[i]) for i in n["inputs"]]
            for k, out in enumerate(n["outputs"]):
                where[out] = (len(nodes), k)
            nodes.append(node)
        doc = {"nodes": nodes, "arg_nodes": arg_nodes,
               "heads": [entry(*where[o]) for o in self.outputs]}
        if layout == "attrs":
            doc["node_row_ptr"] = list(range(len(nodes) + 1))
            doc["attrs"] = {"mxnet_version": ["int", 10600]}
        return json.dumps(doc, indent=1) + "\n"


def graphs():
    out = []

    g = G("mlp", [1, 3, 8, 8])
    x = g.op("Flatten", ["data"])
    x = g.op("FullyConnected", [x, g.w("fc0_weight", [16, 192]), g.w("fc0_bias", [16])], {"num_hidden": 16})
    x = g.op("Activation", [x], {"act_type": "relu"})
    x = g.op("Dropout", [x], {"p": 0.5})
    x = g.op("FullyConnected", [x, g.w("fc1_weight", [4, 16])], {"num_hidden": 4, "no_bias": True})
    g.outputs = [g.op("softmax", [x], {"axis": -1})]
    out.append(g)

    g = G("cnn", [1, 3, 8, 8])
    x = g.op("Convolution", ["data", g.w("conv0_weight", [4, 3, 3, 3]), g.w("conv0_bias", [4])],
             {"kernel": [3, 3], "num_filter": 4, "pad": [1, 1], "stride": [1, 1]})
    x = g.op("BatchNorm", [x, g.w("bn0_gamma", [4]), g.w("bn0_beta", [4]), g.w("bn0_moving_mean", [4]),
                           g.w("bn0_moving_var", [4])], {"eps": 1e-5, "fix_gamma": False})
    x = g.op("Activation", [x], {"act_type": "relu"})
    x = g.op("Pooling", [x], {"kernel": [2, 2], "stride": [2, 2], "pool_type": "max"})
    x = g.op("Convolution", [x, g.w("conv1_weight", [4, 1, 3, 3])],
             {"kernel": [3, 3], "num_filter": 4, "num_group": 4, "pad": [1, 1], "no_bias": True, "dilate": [1, 1]})
    x = g.op("Pooling", [x], {"kernel": [1, 1], "global_pool": True, "pool_type": "avg"})
    x = g.op("Flatten", [x])
    x = g.op("FullyConnected", [x, g.w("fc_weight", [3, 4]), g.w("fc_bias", [3])], {"num_hidden": 3})
    g.outputs = [g.op("SoftmaxOutput", [x])]
    out.append(g)

    g = G("mobile", [1, 3, 8, 8])
    x = g.op("Convolution", ["data", g.w("pw_weight", [8, 3, 1, 1]), g.w("pw_bias", [8])],
             {"kernel": [1, 1], "num_filter": 8})
    x = g.op("clip", [x], {"a_min": 0.0, "a_max": 6.0})
    x = g.op("Convolution", [x, g.w("dw_weight", [8, 1, 3, 3]), g.w("dw_bias", [8])],
             {"kernel": [3, 3], "num_filter": 8, "num_group": 8, "pad": [1, 1], "stride": [2, 2]})
    x = g.op("Pooling", [x], {"kernel": [3, 3], "stride": [1, 1], "pool_type": "avg", "pad": [1, 1],
                              "count_include_pad": False, "pooling_convention": "full"})
    x = g.op("mean", [x], {"axis": [2, 3], "keepdims": False})
    g.outputs = [g.op("Reshape", [x], {"shape": [0, -1]})]
    out.append(g)

    g = G("residual", [1, 3, 8, 8])
    a = g.op("Convolution", ["data", g.w("c0_weight", [3, 3, 3, 3])],
             {"kernel": [3, 3], "num_filter": 3, "pad": [1, 1], "no_bias": True})
    s = g.op("broadcast_add", [a, "data"])
    s = g.op("Activation", [s], {"act_type": "sigmoid"})
    c = g.op("Concat", [s, "data"], {"dim": 1, "num_args": 2})
    parts = g.op("SliceChannel", [c], {"num_outputs": 2, "axis": 1}, outputs=["split_a", "split_b"])
    m = g.op("broadcast_mul", parts)
    m = g.op("broadcast_maximum", [m, g.op("_mul_scalar", [m], {"scalar": 0.1})])
    g.outputs = [g.op("sum", [m], {"axis": [1], "keepdims": True}), "split_b"]
    out.append(g)

    g = G("attention", [1, 3, 8, 8])
    x = g.op("Reshape", ["data"], {"shape": [1, 24, 8]})
    x = g.op("LayerNorm", [x, g.w("ln_gamma", [8]), g.w("ln_beta", [8])], {"axis": -1, "eps": 1e-5})
    q = g.op("FullyConnected", [x, g.w("q_weight", [8, 8]), g.w("q_bias", [8])], {"num_hidden": 8, "flatten": False})
    k = g.op("FullyConnected", [x, g.w("k_weight", [8, 8])], {"num_hidden": 8, "flatten": False, "no_bias": True})
    att = g.op("batch_dot", [q, k], {"transpose_b": True})
    att = g.op("_div_scalar", [att], {"scalar": 2.8284})
    att = g.op("softmax", [att], {"axis": -1, "temperature": 1.0})
    y = g.op("batch_dot", [att, x])
    y = g.op("LeakyReLU", [y], {"act_type": "gelu"})
    y = g.op("transpose", [y], {"axes": [0, 2, 1]})
    y = g.op("slice", [y], {"begin": [None, 0, 2], "end": [None, 4, None], "step": [1, 1, 2]})
    y = g.op("slice_axis", [y], {"axis": 1, "begin": 1, "end": 3})
    y = g.op("expand_dims", [y], {"axis": 0})
    g.outputs = [g.op("squeeze", [y], {"axis": [0]})]
    out.append(g)

    g = G("elementwise", [1, 3, 8, 8])
    x = g.op("abs", ["data"])
    x = g.op("_plus_scalar", [x], {"scalar": 1.0})
    x = g.op("sqrt", [g.op("log", [g.op("exp", [x])])])
    x = g.op("rsqrt", [g.op("square", [x])])
    x = g.op("erf", [g.op("negative", [x])])
    x = g.op("_rminus_scalar", [x], {"scalar": 2.0})
    x = g.op("_rdiv_scalar", [x], {"scalar": 1.0})
    x = g.op("_maximum_scalar", [g.op("_minimum_scalar", [x], {"scalar": 3.0})], {"scalar": -3.0})
    x = g.op("_minus_scalar", [x], {"scalar": 0.5})
    y = g.op("broadcast_sub", [x, g.w("bias", [1, 3, 1, 1])])
    y = g.op("broadcast_div", [y, g.w("scale", [1, 3, 1, 1])])
    y = g.op("broadcast_minimum", [y, x])
    y = g.op("_copy", [y])
    y = g.op("LeakyReLU", [y, g.w("alpha", [3])], {"act_type": "prelu"})
    y = g.op("Flatten", [y])
    y = g.op("dot", [y, g.w("proj", [192, 5])])
    y = g.op("SoftmaxActivation", [y])
    g.outputs = [g.op("log_softmax", [y], {"axis": 1})]
    out.append(g)

    g = G("embedding", [1, 5], input_name="tokens")
    x = g.op("Embedding", ["tokens", g.w("embed_weight", [10, 4])], {"input_dim": 10, "output_dim": 4})
    x = g.op("LeakyReLU", [x], {"act_type": "elu", "slope": 1.0})
    g.outputs = [g.op("sum", [x], {"axis": [1], "exclude": False})]
    out.append(g)

    g = G("identity", [2, 3])
    g.outputs = ["data"]
    out.append(g)
    return out


def make_graphs():
    for g in graphs():
        text = g.model_json()
        write("model_json", g.name + ".json", text)
        if sum(count(s) for _, s in g.weights) * 4 <= 1 << 20:
            write("pipeline", g.name + ".json", text)
        if g.inputs[0][0] == "data" and g.nodes:
            for layout in ("attrs", "attr", "param"):
                write("mxnet_symbol", "%s-%s-symbol.json" % (g.name, layout), g.mxnet_symbol(layout))


def make_quantized():
    """Quantized values (format_version 2): an int8 input per tensor, an int8
    weight per axis, cast to float32 and added."""
    doc = {
        "format": "hybgen-graph", "format_version": 2, "name": "quantized",
        "inputs": [{"name": "codes", "shape": [2, 3], "dtype": "int8",
                    "quantization": {"scale": [0.05], "zero_point": [-3]}}],
        "outputs": ["sum"],
        "weights": [{"name": "w", "shape": [2, 3], "dtype": "int8",
                     "quantization": {"scale": [0.25, 0.0078125], "zero_point": [0, 0], "axis": 0}}],
        "nodes": [
            {"name": "x", "op": "Cast", "inputs": ["codes"], "outputs": ["x"], "attrs": {"dtype": "float32"}},
            {"name": "wf", "op": "Cast", "inputs": ["w"], "outputs": ["wf"], "attrs": {"dtype": "float32"}},
            {"name": "sum", "op": "elemwise_add", "inputs": ["x", "wf"], "outputs": ["sum"]},
        ],
    }
    text = json.dumps(doc, indent=1) + "\n"
    write("model_json", "quantized.json", text)
    write("pipeline", "quantized.json", text)


if __name__ == "__main__":
    make_npy()
    make_safetensors()
    make_params()
    make_graphs()
    make_quantized()
