#!/usr/bin/env python3
"""Writes tests/data/digits-cnn/: a small CNN trained on scikit-learn's digits
(8x8 grey images, 10 classes) with numpy alone, as a hybgen model
(digits_cnn.json + digits_cnn.safetensors), with held-out digits and
calibration digits as .npy, for the int8 accuracy test
(tests/cli/quantize_command_test.cpp). Everything is seeded: the same numpy
and scikit-learn give the same files.

    python3.11 -m venv /tmp/digits-venv && /tmp/digits-venv/bin/pip install scikit-learn numpy
    /tmp/digits-venv/bin/python scripts/make_digits_cnn.py tests/data/digits-cnn

The network (NCHW, pixels 0-16 scaled to [0, 1]):
  conv0 3x3, 8 filters, pad 1 -> relu -> max pool 2x2
  conv1 3x3, 16 filters, pad 1 -> relu -> max pool 2x2
  dense0 64 -> 10 (logits)
trained by Adam on cross-entropy; 300 digits are held out (never trained on)
and 100 training digits are kept for calibration.
"""
import json
import os
import struct
import sys

import numpy as np
from sklearn.datasets import load_digits

SEED = 20261129
HELD_OUT = 300
CALIBRATION = 100
EPOCHS = 60
BATCH = 32
LR = 0.005


# ---------------------------------------------------------------- layers (numpy)

def im2col(x, k=3, pad=1):
    """(N, C, H, W) -> (N, H*W, C*k*k) patches of a stride-1 convolution with `pad`."""
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    cols = np.empty((n, c, k, k, h, w), x.dtype)
    for i in range(k):
        for j in range(k):
            cols[:, :, i, j] = xp[:, :, i:i + h, j:j + w]
    return cols.transpose(0, 4, 5, 1, 2, 3).reshape(n, h * w, c * k * k)


def col2im(cols, shape, k=3, pad=1):
    n, c, h, w = shape
    cols = cols.reshape(n, h, w, c, k, k).transpose(0, 3, 4, 5, 1, 2)
    xp = np.zeros((n, c, h + 2 * pad, w + 2 * pad), cols.dtype)
    for i in range(k):
        for j in range(k):
            xp[:, :, i:i + h, j:j + w] += cols[:, :, i, j]
    return xp[:, :, pad:pad + h, pad:pad + w]


def conv_forward(x, w, b):
    n, c, h, wd = x.shape
    cols = im2col(x)
    y = cols @ w.reshape(w.shape[0], -1).T + b  # (N, HW, F)
    return y.transpose(0, 2, 1).reshape(n, w.shape[0], h, wd), cols


def conv_backward(dy, cols, x_shape, w):
    n, f, h, wd = dy.shape
    d = dy.reshape(n, f, h * wd).transpose(0, 2, 1)  # (N, HW, F)
    dw = np.einsum("npf,npk->fk", d, cols).reshape(w.shape)
    db = d.sum(axis=(0, 1))
    dx = col2im(d @ w.reshape(f, -1), x_shape)
    return dx, dw, db


def pool_forward(x):
    n, c, h, w = x.shape
    r = x.reshape(n, c, h // 2, 2, w // 2, 2)
    y = r.max(axis=(3, 5))
    return y, r


def pool_backward(dy, r, y):
    mask = (r == y[:, :, :, None, :, None]).astype(dy.dtype)
    mask /= mask.sum(axis=(3, 5), keepdims=True)  # ties share the gradient
    return (mask * dy[:, :, :, None, :, None]).reshape(r.shape[0], r.shape[1], r.shape[2] * 2, r.shape[4] * 2)


def forward(p, x, keep=False):
    z0, cols0 = conv_forward(x, p["conv0_weight"], p["conv0_bias"])
    a0 = np.maximum(z0, 0)
    p0, r0 = pool_forward(a0)
    z1, cols1 = conv_forward(p0, p["conv1_weight"], p["conv1_bias"])
    a1 = np.maximum(z1, 0)
    p1, r1 = pool_forward(a1)
    f = p1.reshape(p1.shape[0], -1)
    logits = f @ p["dense0_weight"].T + p["dense0_bias"]
    if not keep:
        return logits
    return logits, (x, z0, cols0, p0, r0, z1, cols1, p1, r1, f)


def gradients(p, x, labels):
    logits, (x, z0, cols0, p0, r0, z1, cols1, p1, r1, f) = forward(p, x, keep=True)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    prob = e / e.sum(axis=1, keepdims=True)
    n = x.shape[0]
    loss = -np.log(prob[np.arange(n), labels] + 1e-12).mean()
    d = prob
    d[np.arange(n), labels] -= 1
    d /= n
    g = {"dense0_weight": d.T @ f, "dense0_bias": d.sum(axis=0)}
    dp1 = (d @ p["dense0_weight"]).reshape(p1.shape)
    da1 = pool_backward(dp1, r1, p1) * (z1 > 0)
    dp0, g["conv1_weight"], g["conv1_bias"] = conv_backward(da1, cols1, p0.shape, p["conv1_weight"])
    da0 = pool_backward(dp0, r0, p0) * (z0 > 0)
    _, g["conv0_weight"], g["conv0_bias"] = conv_backward(da0, cols0, x.shape, p["conv0_weight"])
    return loss, g


# ---------------------------------------------------------------- the files

def model_json(params):
    def conv(name, data, filters):
        return {"name": name + "_fwd", "op": "Convolution", "inputs": [data, name + "_weight", name + "_bias"],
                "outputs": [name + "_fwd"],
                "attrs": {"kernel": [3, 3], "no_bias": False, "num_filter": filters, "pad": [1, 1]}}

    def relu(name, data):
        return {"name": name, "op": "Activation", "inputs": [data], "outputs": [name], "attrs": {"act_type": "relu"}}

    def pool(name, data):
        return {"name": name, "op": "Pooling", "inputs": [data], "outputs": [name],
                "attrs": {"kernel": [2, 2], "pool_type": "max", "stride": [2, 2]}}

    nodes = [conv("conv0", "data", 8), relu("conv0_relu", "conv0_fwd"), pool("pool0_fwd", "conv0_relu"),
             conv("conv1", "pool0_fwd", 16), relu("conv1_relu", "conv1_fwd"), pool("pool1_fwd", "conv1_relu"),
             {"name": "dense0_fwd", "op": "FullyConnected", "inputs": ["pool1_fwd", "dense0_weight", "dense0_bias"],
              "outputs": ["dense0_fwd"], "attrs": {"flatten": True, "no_bias": False, "num_hidden": 10}}]
    return {"format": "hybgen-graph", "format_version": 1, "name": "digits_cnn",
            "inputs": [{"name": "data", "shape": [1, 1, 8, 8], "dtype": "float32"}], "outputs": ["dense0_fwd"],
            "weights": [{"name": k, "shape": list(params[k].shape), "dtype": "float32"} for k in sorted(params)],
            "nodes": nodes}


def safetensors_bytes(params):
    header, offset, data = {}, 0, b""
    for k in sorted(params):
        raw = params[k].astype("<f4").tobytes()
        header[k] = {"dtype": "F32", "shape": list(params[k].shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        data += raw
    text = json.dumps(header, separators=(",", ":"))
    text += " " * ((8 - (8 + len(text)) % 8) % 8)  # data 8-byte aligned
    return struct.pack("<Q", len(text)) + text.encode() + data


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/data/digits-cnn"
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(SEED)
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]  # (1797, 1, 8, 8)
    y = digits.target.astype(np.int64)
    order = rng.permutation(len(y))
    test, train = order[:HELD_OUT], order[HELD_OUT:]

    def he(*shape):
        fan_in = int(np.prod(shape[1:]))
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float64)

    p = {"conv0_weight": he(8, 1, 3, 3), "conv0_bias": np.zeros(8), "conv1_weight": he(16, 8, 3, 3),
         "conv1_bias": np.zeros(16), "dense0_weight": he(10, 64), "dense0_bias": np.zeros(10)}
    m = {k: np.zeros_like(v) for k, v in p.items()}
    v = {k: np.zeros_like(v) for k, v in p.items()}
    step = 0
    xt, yt = x[train].astype(np.float64), y[train]
    for epoch in range(EPOCHS):
        perm = rng.permutation(len(train))
        losses = []
        for first in range(0, len(perm), BATCH):
            idx = perm[first:first + BATCH]
            loss, g = gradients(p, xt[idx], yt[idx])
            losses.append(loss)
            step += 1
            for k in p:  # Adam
                m[k] = 0.9 * m[k] + 0.1 * g[k]
                v[k] = 0.999 * v[k] + 0.001 * g[k] ** 2
                p[k] -= LR * (m[k] / (1 - 0.9 ** step)) / (np.sqrt(v[k] / (1 - 0.999 ** step)) + 1e-8)
        if epoch % 10 == 9 or epoch == EPOCHS - 1:
            acc = (forward(p, x[test].astype(np.float64)).argmax(axis=1) == y[test]).mean()
            print(f"epoch {epoch + 1}: loss {np.mean(losses):.4f}, held-out accuracy {100 * acc:.2f}%")

    params = {k: val.astype(np.float32) for k, val in p.items()}
    with open(os.path.join(out, "digits_cnn.json"), "w") as f:
        json.dump(model_json(params), f, indent=2)
        f.write("\n")
    with open(os.path.join(out, "digits_cnn.safetensors"), "wb") as f:
        f.write(safetensors_bytes(params))
    np.save(os.path.join(out, "test_x.npy"), x[test])
    np.save(os.path.join(out, "test_y.npy"), y[test].astype(np.float32))
    np.save(os.path.join(out, "calibration.npy"), x[train[:CALIBRATION]])
    acc32 = (forward({k: val.astype(np.float32) for k, val in params.items()}, x[test]).argmax(axis=1)
             == y[test]).mean()
    print(f"wrote {out}: float32 accuracy on the {HELD_OUT} held-out digits {100 * acc32:.2f}%")


if __name__ == "__main__":
    main()
