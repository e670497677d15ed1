#!/usr/bin/env python3
"""Self-test of to_onnx.py: one small hand-written hybgen graph per converted op
and attribute form, each converted, run in ONNX Runtime and compared with
hybgen's generated code (`hybgen verify --expected`, 1e-4 relative).

    build-peers/venv/bin/python bench/peers/test_to_onnx.py [--hybgen PATH] [-k SUBSTRING] [--keep DIR]

Needs numpy, onnx, onnxruntime (bench_peers.py puts them in build-peers/venv)
and a built hybgen. Prints one line per case and exits non-zero on any failure.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import to_onnx  # noqa: E402

RNG = np.random.default_rng(3)


def w(*shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, shape).astype(np.float32)


def node(name, op, inputs, outputs=None, **attrs):
    n = {"name": name, "op": op, "inputs": inputs, "attrs": attrs}
    if outputs:
        n["outputs"] = outputs
    return n


# name -> (inputs {name: shape}, weights {name: array}, nodes, outputs)
def cases():
    c = {}
    x4 = {"data": [2, 3, 9, 8]}
    c["fc_flatten_rank4"] = (x4, {"fw": w(5, 216), "fb": w(5)},
                             [node("fc", "FullyConnected", ["data", "fw", "fb"], num_hidden=5)], ["fc"])
    c["fc_no_flatten_no_bias"] = ({"data": [2, 4, 6]}, {"fw": w(7, 6)},
                                  [node("fc", "FullyConnected", ["data", "fw"], num_hidden=7, flatten=False,
                                        no_bias=True)], ["fc"])
    c["fc_no_flatten_bias"] = ({"data": [2, 4, 6]}, {"fw": w(7, 6), "fb": w(7)},
                               [node("fc", "FullyConnected", ["data", "fw", "fb"], num_hidden=7, flatten=False)],
                               ["fc"])
    c["conv_group_dilate_stride_pad"] = (
        {"data": [1, 4, 11, 10]}, {"cw": w(6, 2, 3, 3), "cb": w(6)},
        [node("conv", "Convolution", ["data", "cw", "cb"], kernel=[3, 3], num_filter=6, num_group=2, stride=[2, 1],
              dilate=[2, 1], pad=[1, 2])], ["conv"])
    c["conv_no_bias_depthwise"] = ({"data": [1, 4, 7, 7]}, {"cw": w(4, 1, 3, 3)},
                                   [node("conv", "Convolution", ["data", "cw"], kernel=[3, 3], num_filter=4,
                                         num_group=4, pad=[1, 1], no_bias=True)], ["conv"])
    for act in ["relu", "sigmoid", "tanh", "softrelu", "softsign"]:
        c["act_" + act] = ({"data": [3, 17]}, {}, [node("a", "Activation", ["data"], act_type=act)], ["a"])
    for act, slope in [("leaky", 0.1), ("elu", 0.7), ("selu", 0.25), ("gelu", 0.25), ("rrelu", 0.25)]:
        c["leaky_" + act] = ({"data": [3, 17]}, {}, [node("a", "LeakyReLU", ["data"], act_type=act, slope=slope)],
                             ["a"])
    c["leaky_prelu"] = (x4, {"g": w(3)}, [node("a", "LeakyReLU", ["data", "g"], act_type="prelu")], ["a"])
    bn = {"g": w(3, low=0.5, high=1.5), "b": w(3), "m": w(3), "v": w(3, low=0.5, high=1.5)}
    c["bn_fix_gamma"] = (x4, bn, [node("bn", "BatchNorm", ["data", "g", "b", "m", "v"], eps=1e-3)], ["bn"])
    c["bn_gamma"] = (x4, bn, [node("bn", "BatchNorm", ["data", "g", "b", "m", "v"], eps=1e-5, fix_gamma=False)],
                     ["bn"])
    bn4 = {"g": w(4, low=0.5, high=1.5), "b": w(4), "m": w(4), "v": w(4, low=0.5, high=1.5)}
    c["bn_axis_last"] = ({"data": [2, 5, 4]}, bn4,
                         [node("bn", "BatchNorm", ["data", "g", "b", "m", "v"], axis=-1, fix_gamma=False)], ["bn"])
    c["layernorm_last"] = ({"data": [2, 5, 8]}, {"g": w(8), "b": w(8)},
                           [node("ln", "LayerNorm", ["data", "g", "b"])], ["ln"])
    c["layernorm_axis1"] = ({"data": [2, 5, 8]}, {"g": w(5), "b": w(5)},
                            [node("ln", "LayerNorm", ["data", "g", "b"], axis=1, eps=1e-3)], ["ln"])
    pools = {
        "max_valid": dict(pool_type="max", kernel=[2, 2], stride=[2, 2]),
        "max_pad": dict(pool_type="max", kernel=[3, 3], stride=[2, 2], pad=[1, 1]),
        "max_full": dict(pool_type="max", kernel=[3, 3], stride=[2, 2], pooling_convention="full"),
        "avg_full_pad": dict(pool_type="avg", kernel=[3, 3], stride=[2, 2], pad=[1, 1], pooling_convention="full"),
        "avg_nopad_count": dict(pool_type="avg", kernel=[3, 3], stride=[1, 1], pad=[1, 1], count_include_pad=False),
        "sum_valid": dict(pool_type="sum", kernel=[2, 2], stride=[1, 1]),
        "global_avg": dict(pool_type="avg", global_pool=True),
        "global_max": dict(pool_type="max", global_pool=True),
        "global_sum": dict(pool_type="sum", global_pool=True),
    }
    for k, a in pools.items():
        c["pool_" + k] = (x4, {}, [node("p", "Pooling", ["data"], **a)], ["p"])
    c["flatten"] = (x4, {}, [node("f", "Flatten", ["data"])], ["f"])
    c["reshape_codes"] = (x4, {}, [node("r", "Reshape", ["data"], shape=[0, -3, -1])], ["r"])
    c["concat"] = ({"a": [2, 3, 4], "b": [2, 5, 4]}, {}, [node("c", "Concat", ["a", "b"], dim=1)], ["c"])
    c["concat_neg"] = ({"a": [2, 3, 4], "b": [2, 3, 1]}, {}, [node("c", "Concat", ["a", "b"], dim=-1)], ["c"])
    for op in ["broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div", "broadcast_maximum",
               "broadcast_minimum", "elemwise_add", "_plus"]:
        c["bin_" + op] = ({"a": [2, 3, 4], "b": [3, 1]}, {}, [node("o", op, ["a", "b"])], ["o"])
    for op in ["_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar", "_rdiv_scalar",
               "_maximum_scalar", "_minimum_scalar"]:
        c["scalar" + op] = ({"data": [4, 5]}, {}, [node("o", op, ["data"], scalar=0.75)], ["o"])
    c["clip"] = ({"data": [4, 5]}, {}, [node("o", "clip", ["data"], a_min=-0.3, a_max=0.6)], ["o"])
    c["softmax_axis1_temp"] = (x4, {}, [node("o", "softmax", ["data"], axis=1, temperature=2.0)], ["o"])
    c["log_softmax"] = ({"data": [3, 7]}, {}, [node("o", "log_softmax", ["data"])], ["o"])
    c["softmax_activation_instance"] = (x4, {}, [node("o", "SoftmaxActivation", ["data"])], ["o"])
    c["softmax_activation_channel"] = (x4, {}, [node("o", "SoftmaxActivation", ["data"], mode="channel")], ["o"])
    c["softmax_output"] = ({"data": [3, 7]}, {}, [node("o", "SoftmaxOutput", ["data"])], ["o"])
    c["dropout_copy"] = ({"data": [3, 7]}, {}, [node("d", "Dropout", ["data"]), node("o", "_copy", ["d"]),
                                                node("o2", "_mul_scalar", ["o"], scalar=2.0)], ["o2"])
    c["transpose"] = (x4, {}, [node("o", "transpose", ["data"], axes=[0, 2, 3, 1])], ["o"])
    c["transpose_default"] = ({"data": [2, 3, 4]}, {}, [node("o", "transpose", ["data"])], ["o"])
    for ta in (False, True):
        for tb in (False, True):
            sa = [2, 5, 3] if ta else [2, 3, 5]
            sb = [2, 4, 5] if tb else [2, 5, 4]
            c[f"batch_dot_{int(ta)}{int(tb)}"] = ({"a": sa, "b": sb}, {},
                                                   [node("o", "batch_dot", ["a", "b"], transpose_a=ta,
                                                         transpose_b=tb)], ["o"])
    c["dot_weight_tb"] = ({"a": [2, 3, 5]}, {"m": w(4, 5)},
                          [node("o", "dot", ["a", "m"], transpose_b=True)], ["o"])
    c["dot_ta"] = ({"a": [5, 3], "b": [5, 4]}, {}, [node("o", "dot", ["a", "b"], transpose_a=True)], ["o"])
    for op in ["sum", "mean"]:
        c[op + "_axes_keep"] = (x4, {}, [node("o", op, ["data"], axis=[1, -1], keepdims=True)], ["o"])
        c[op + "_all"] = (x4, {}, [node("o", op, ["data"])], ["o"])
        c[op + "_exclude"] = (x4, {}, [node("o", op, ["data"], axis=[1], exclude=True)], ["o"])
    c["expand_squeeze"] = ({"data": [3, 1, 4]}, {},
                           [node("e", "expand_dims", ["data"], axis=-1), node("s", "squeeze", ["e"])], ["s"])
    c["squeeze_axis"] = ({"data": [3, 1, 4, 1]}, {}, [node("s", "squeeze", ["data"], axis=[1])], ["s"])
    for op in ["erf", "exp", "sqrt", "rsqrt", "log", "abs", "negative", "square"]:
        c["unary_" + op] = ({"data": [4, 6]}, {},
                            [node("a", "abs", ["data"]), node("p", "_plus_scalar", ["a"], scalar=0.5),
                             node("o", op, ["p"])], ["o"])
    c["split"] = (x4, {}, [node("s", "SliceChannel", ["data"], ["s0", "s1", "s2"], num_outputs=3),
                           node("o", "broadcast_add", ["s0", "s2"])], ["o", "s1"])
    c["split_squeeze"] = ({"data": [2, 3, 4]}, {},
                          [node("s", "SliceChannel", ["data"], ["s0", "s1"], num_outputs=2, axis=0,
                                squeeze_axis=True)], ["s0", "s1"])
    c["slice"] = (x4, {}, [node("o", "slice", ["data"], begin=[None, 1, -7], end=[None, None, 8],
                                step=[None, 1, 2])], ["o"])
    c["slice_negative_step"] = (x4, {}, [node("o", "slice", ["data"], begin=[1, None, None], end=[None, None, 1],
                                               step=[-1, -1, -2])], ["o"])
    c["slice_axis"] = (x4, {}, [node("o", "slice_axis", ["data"], axis=-1, begin=2, end=-1)], ["o"])
    # RNN: MXNet's flat parameters (per layer and direction W_i2h, W_h2h; then the biases) as a weight,
    # or joined from the layer's weights as Gluon exports them; states as weights or as inputs.
    for mode, gates, layers, bidir in [("lstm", 4, 2, True), ("gru", 3, 2, True), ("rnn_relu", 1, 1, False),
                                       ("rnn_tanh", 1, 2, True)]:
        T, N, C, H, D = 5, 2, 3, 4, 2 if bidir else 1
        size = sum(D * gates * H * ((C if l == 0 else D * H) + H + 2) for l in range(layers))
        states = {"h0": w(layers * D, N, H)}
        if mode == "lstm":
            states["c0"] = w(layers * D, N, H)
        outs = ["r_out", "r_hy"] + (["r_cy"] if mode == "lstm" else [])
        c["rnn_" + mode] = ({"data": [T, N, C]}, {"p": w(size, low=-0.5, high=0.5), **states},
                            [node("r", "RNN", ["data", "p", *states], outs, mode=mode, state_size=H,
                                  num_layers=layers, bidirectional=bidir, state_outputs=True)], outs)
    gh = 4 * 6
    c["rnn_gluon_lstm_ntc"] = (
        {"data": [2, 7, 5], "h0": [1, 2, 6], "c0": [1, 2, 6]},
        {"wi": w(gh, 5), "wh": w(gh, 6), "bi": w(gh), "bh": w(gh)},
        [node("sw", "SwapAxis", ["data"], dim1=0, dim2=1),
         *[node("f" + k, "Reshape", [k], shape=[-1]) for k in ["wi", "wh", "bi", "bh"]],
         node("cat", "Concat", ["fwi", "fwh", "fbi", "fbh"], dim=0),
         node("r", "RNN", ["sw", "cat", "h0", "c0"], mode="lstm", state_size=6, num_layers=1),
         node("o", "SwapAxis", ["r"], dim1=1, dim2=0)], ["o"])
    return c


def write_case(folder: Path, name: str, inputs, weights, nodes, outputs) -> Path:
    model = {"format": "hybgen-graph", "format_version": 1, "name": name,
             "inputs": [{"name": k, "shape": v, "dtype": "float32"} for k, v in inputs.items()],
             "outputs": outputs,
             "weights": [{"name": k, "shape": list(v.shape), "dtype": "float32"} for k, v in sorted(weights.items())],
             "nodes": nodes}
    path = folder / f"{name}.json"
    path.write_text(json.dumps(model, indent=2))
    to_onnx.write_safetensors(folder / f"{name}.safetensors", weights)
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hybgen")
    ap.add_argument("-k", default="", help="only cases whose name contains this")
    ap.add_argument("--keep", help="write the cases here instead of a temporary folder")
    args = ap.parse_args()
    hybgen = to_onnx.find_hybgen(args.hybgen)
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for name, (inputs, weights, nodes, outputs) in cases().items():
            if args.k not in name:
                continue
            path = write_case(folder, name, inputs, weights, nodes, outputs)
            onnx_path = folder / f"{name}.onnx"
            try:
                to_onnx.convert(str(path), str(onnx_path), hybgen=hybgen)
                r = to_onnx.check(str(path), str(onnx_path), hybgen=hybgen, quiet=True)
            except to_onnx.ConversionError as e:
                r = {"ok": False, "outputs": {}, "text": str(e)}
            errs = ", ".join(f"{k} {v:.1e}" for k, v in r["outputs"].items())
            print(f"{'ok  ' if r['ok'] else 'FAIL'} {name:<34} {errs}", flush=True)
            if not r["ok"]:
                failed.append(name)
                print("     " + r["text"].replace("\n", "\n     "))
    print(f"{len(failed)} failed" + (f": {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
