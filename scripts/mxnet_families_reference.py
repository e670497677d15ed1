#!/usr/bin/env python3
"""Records MXNet's own outputs for the kinds of Gluon models people write
beyond the vision zoo: a U-Net, an FCN that upsamples, an LSTM
classifier, a bidirectional GRU, a 1-D audio CNN, a block of normalization
layers, blocks of standalone elementwise, reduction and shape ops, and a
two-input embedding model. Tests then compare hybgen's generated code with
MXNet without MXNet installed.

Weights are the made-up numbers `hybgen --random-weights 1` computes from
each parameter's name and shape (scripts/mxnet_zoo_reference.py, whose
helpers this reuses). Inputs are made from a formula by kind:

  wave      x[i] = ((i * 37) % 101) / 50 - 1
  tokens:V  x[i] = (i * 37) % V            (indices for an Embedding of V rows)

Writes into tests/data/mxnet_families/:

  NAME-symbol.json       the graph as Gluon's export() writes it
  NAME-0000.params       its weights, for the recurrent models only
  NAME-output.npy        MXNet's first output on those inputs
  NAME-inputs.txt        one line per input: NAME KIND D0xD1x...

    python3 -m venv /tmp/mx && /tmp/mx/bin/pip install mxnet==1.9.1 "numpy<1.24"
    /tmp/mx/bin/python scripts/mxnet_families_reference.py [NAME ...] [--out DIR]
"""
import os
import sys

import subprocess

import numpy as np

os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")
import mxnet as mx  # noqa: E402
from mxnet.gluon import nn, rnn  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mxnet_zoo_reference import made_up  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "mxnet_families")


def make_input(kind, shape):
    i = np.arange(int(np.prod(shape)), dtype=np.int64)
    if kind == "wave":
        x = ((i * 37) % 101) / 50.0 - 1.0
    elif kind.startswith("tokens:"):
        x = (i * 37) % int(kind.split(":")[1])
    else:
        raise ValueError(kind)
    return x.astype(np.float32).reshape(shape)


def conv_relu(channels, kernel=3):
    block = nn.HybridSequential()
    block.add(nn.Conv2D(channels, kernel, padding=kernel // 2), nn.Activation("relu"))
    return block


class UNet(nn.HybridBlock):
    """Three levels: two 3x3 convolutions per level, max pooling down,
    Conv2DTranspose up, skips joined by concatenation."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.down1 = nn.HybridSequential()
            self.down1.add(conv_relu(8), conv_relu(8))
            self.down2 = nn.HybridSequential()
            self.down2.add(conv_relu(16), conv_relu(16))
            self.bottom = nn.HybridSequential()
            self.bottom.add(conv_relu(32), conv_relu(32))
            self.up2 = nn.Conv2DTranspose(16, 2, strides=2)
            self.merge2 = nn.HybridSequential()
            self.merge2.add(conv_relu(16), conv_relu(16))
            self.up1 = nn.Conv2DTranspose(8, 4, strides=2, padding=1)
            self.merge1 = nn.HybridSequential()
            self.merge1.add(conv_relu(8), conv_relu(8))
            self.head = nn.Conv2D(2, 1)

    def hybrid_forward(self, F, x):
        s1 = self.down1(x)
        s2 = self.down2(F.Pooling(s1, kernel=(2, 2), stride=(2, 2), pool_type="max"))
        b = self.bottom(F.Pooling(s2, kernel=(2, 2), stride=(2, 2), pool_type="max"))
        u2 = self.merge2(F.concat(self.up2(b), s2, dim=1))
        u1 = self.merge1(F.concat(self.up1(u2), s1, dim=1))
        return self.head(u1)


class UpsampleFCN(nn.HybridBlock):
    """Strided convolutions down, then nearest UpSampling, bilinear resizes
    by size, by scale and like another tensor, and a grouped transposed
    convolution."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.enc1 = nn.Conv2D(8, 3, strides=2, padding=1, activation="relu")
            self.enc2 = nn.Conv2D(16, 3, strides=2, padding=1, activation="relu")
            self.mid = nn.Conv2D(8, 1)
            self.deconv = nn.Conv2DTranspose(8, 3, strides=2, padding=1, output_padding=1, groups=2,
                                              in_channels=16)
            self.head = nn.Conv2D(3, 3, padding=1)

    def hybrid_forward(self, F, x):
        e1 = self.enc1(x)
        e2 = self.enc2(e1)
        up = F.UpSampling(self.mid(e2), scale=2, sample_type="nearest")
        resized = F.contrib.BilinearResize2D(e2, height=17, width=13, align_corners=True)
        scaled = F.contrib.BilinearResize2D(resized, scale_height=2.0, scale_width=1.5, mode="odd_scale",
                                            align_corners=False)
        like = F.contrib.BilinearResize2D(scaled, e1, mode="like")
        y = F.concat(up + self.deconv(e2), like, dim=1)
        return self.head(F.contrib.BilinearResize2D(y, height=32, width=32))


class LSTMClassifier(nn.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.lstm = rnn.LSTM(32, layout="NTC")
            self.out = nn.Dense(5, flatten=False)

    def hybrid_forward(self, F, x):
        h = self.lstm(x)  # (N, T, 32)
        return self.out(F.squeeze(F.slice_axis(h, axis=1, begin=-1, end=None), axis=1))


class BiGRU(nn.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.gru = rnn.GRU(12, num_layers=2, bidirectional=True)
            self.rnn = rnn.RNN(6, activation="tanh")
            self.out = nn.Dense(3, flatten=False)

    def hybrid_forward(self, F, x):  # x: (T, N, C)
        return self.out(self.rnn(self.gru(x)))


class ReluRNNClassifier(nn.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.rnn = rnn.RNN(5, num_layers=2, activation="relu", layout="NTC")
            self.out = nn.Dense(4)

    def hybrid_forward(self, F, x):
        return self.out(F.slice_axis(self.rnn(x), axis=1, begin=-1, end=None))


class AudioCNN1D(nn.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential()
            self.features.add(nn.Conv1D(8, 9, strides=2, padding=4, activation="relu"), nn.MaxPool1D(2),
                              nn.Conv1D(16, 5, dilation=2), nn.BatchNorm(), nn.Activation("relu"),
                              nn.AvgPool1D(3, strides=2, padding=1), nn.Conv1D(16, 3, groups=4),
                              nn.GlobalAvgPool1D())
            self.out = nn.Dense(4)

    def hybrid_forward(self, F, x):
        return self.out(self.features(x))


class NormBlock(nn.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.conv1 = nn.Conv2D(8, 3, padding=1)
            self.inorm = nn.InstanceNorm()
            self.conv2 = nn.Conv2D(8, 3, padding=1)
            self.gnorm = nn.GroupNorm(num_groups=4)

    def hybrid_forward(self, F, x):
        y = F.relu(self.inorm(self.conv1(x)))
        y = F.LRN(self.gnorm(self.conv2(y)), nsize=3)
        a = F.L2Normalization(y, mode="instance")
        b = F.L2Normalization(y, mode="channel")
        c = F.L2Normalization(y, mode="spatial")
        return a + b + c


class ElementwiseOps(nn.HybridBlock):
    """F.relu, F.sigmoid and the like as Gluon code calls them standalone."""

    def hybrid_forward(self, F, x):  # x: (2, 5, 7)
        swish = x * F.sigmoid(x)
        a = F.relu(x) + F.tanh(x) + F.softsign(x) + swish
        b = F.where(x > 0, x, 0.1 * x) + F.reciprocal(F.abs(x) + 1) + F.sign(x)
        c = F.floor(x * 3) + F.ceil(x * 3) + F.round(x * 3) + F.sin(x) + F.cos(x)
        d = F.log1p(F.abs(x)) + F.expm1(x) + (F.abs(x) + 0.5) ** 1.5 + 2 ** x
        # x lies on a grid of 0.02 and a mean of 7 on one of 0.02 / 7: the offset
        # keeps every comparison at least 1e-3 from a tie that rounding could flip.
        e = F.broadcast_greater(x, F.mean(x, axis=2, keepdims=True) + 0.01) + F.broadcast_power(F.abs(x) + 1, x)
        f = F.add_n(a, b, c) + F.ElementWiseSum(d, e) + F.BlockGrad(x) + F.ones_like(x) - F.zeros_like(x)
        g = F.broadcast_to(F.slice_axis(x, axis=0, begin=0, end=1), shape=(2, 5, 7))
        h = F.broadcast_axis(F.sum(x, axis=1, keepdims=True), axis=1, size=5)
        i = F.broadcast_like(F.max(x, axis=0, keepdims=True), x)
        return f + g + h + i + (x >= 0.25) + (x == 0) + (x != x) + (x < -0.5)


class ReduceOps(nn.HybridBlock):
    def hybrid_forward(self, F, x):  # x: (3, 4, 6)
        parts = [F.max(x, axis=2), F.min(x, axis=2), F.prod(x + 1.5, axis=2), F.norm(x, axis=2),
                 F.norm(x, ord=1, axis=2), F.argmax(x, axis=2), F.argmin(x, axis=2),
                 F.topk(x, axis=2, k=2, ret_typ="value").sum(axis=2),
                 F.topk(x, axis=2, k=1, ret_typ="indices").reshape((3, 4)),
                 F.pick(x, F.argmax(x, axis=2), axis=2), F.max(x, axis=(0, 2), keepdims=True).reshape((1, 4)),
                 F.sum(x, axis=1, exclude=True).reshape((1, 4))]
        return F.concat(*[F.broadcast_to(p.reshape((-1, 4)), shape=(3, 4)) for p in parts], dim=1)


class ShapeOps(nn.HybridBlock):
    def hybrid_forward(self, F, x):  # x: (2, 4, 6, 6)
        a = F.tile(F.slice_axis(x, axis=1, begin=0, end=2), reps=(1, 2, 1, 1))
        b = F.repeat(F.slice_axis(x, axis=1, begin=0, end=2), repeats=2, axis=1)
        c = F.reverse(x, axis=3) + F.flip(x, axis=2)
        d = F.slice_like(F.Pad(x, mode="constant", pad_width=(0, 0, 0, 0, 1, 1, 2, 2), constant_value=0.5),
                         x, axes=(2, 3))
        e = F.slice_like(F.Pad(x, mode="edge", pad_width=(0, 0, 0, 0, 2, 1, 1, 2)), x) + \
            F.slice_like(F.Pad(x, mode="reflect", pad_width=(0, 0, 0, 0, 1, 1, 1, 1)), x)
        f = F.depth_to_space(F.space_to_depth(x, block_size=2), block_size=2)
        g = F.Cast(F.Cast(x * 1000, dtype="float16"), dtype="float32")
        lengths = F.clip(F.abs(F.round(F.sum(x, axis=(1, 2, 3)))), 1, 4)
        h = F.SequenceMask(x, lengths, use_sequence_length=True, value=-2, axis=1)
        s = F.stack(a, b, c, d, axis=1).sum(axis=1)
        t = F.take(x, F.one_hot(F.argmax(F.sum(x, axis=(0, 2, 3)), axis=0), depth=4).reshape((4,)),
                   axis=1, mode="clip")
        return s + e + f + g + h + t


class TwoInputEmbedding(nn.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.tokens = nn.Embedding(50, 16)
            self.segments = nn.Embedding(2, 16)
            self.out = nn.Dense(4)

    def hybrid_forward(self, F, tokens, segments):
        return self.out(F.mean(self.tokens(tokens) + self.segments(segments), axis=1))


# MXNet 1.9.1's oneDNN operators fail on some of these layers (a 1-D
# convolution before BatchNorm) and its plain CPU RNN fails on Gluon's
# recurrent layers, so each model runs in a process of its own, with oneDNN
# off except where named here.
NEEDS_ONEDNN = {"lstm_classifier", "bigru", "relu_rnn_classifier"}
# Gluon exports recurrent weights with the input size left 0 in `__shape__`
# (deferred), and they reach the RNN through Reshape and Concat, so an import
# cannot make them up: these models keep their NAME-0000.params.
KEEP_PARAMS = {"lstm_classifier", "bigru", "relu_rnn_classifier"}

MODELS = [  # name, block, inputs [(kind, shape)]
    ("unet", UNet, [("wave", (1, 3, 32, 32))]),
    ("upsample_fcn", UpsampleFCN, [("wave", (1, 3, 32, 32))]),
    ("lstm_classifier", LSTMClassifier, [("wave", (2, 10, 8))]),
    ("bigru", BiGRU, [("wave", (7, 2, 5))]),
    ("relu_rnn_classifier", ReluRNNClassifier, [("wave", (2, 4, 3))]),
    ("audio_cnn1d", AudioCNN1D, [("wave", (2, 1, 200))]),
    ("norm_block", NormBlock, [("wave", (2, 3, 6, 6))]),
    ("elementwise_ops", ElementwiseOps, [("wave", (2, 5, 7))]),
    ("reduce_ops", ReduceOps, [("wave", (3, 4, 6))]),
    ("shape_ops", ShapeOps, [("wave", (2, 4, 6, 6))]),
    ("two_input_embedding", TwoInputEmbedding, [("tokens:50", (2, 9)), ("tokens:2", (2, 9))]),
]


def main():
    args = sys.argv[1:]
    out = OUT
    if "--out" in args:
        k = args.index("--out")
        out = args[k + 1]
        del args[k:k + 2]
    if args[:1] == ["--one"]:
        name, block_class, inputs = next(m for m in MODELS if m[0] == args[1])
        return record(name, block_class, inputs, out)
    only = set(args)
    for name, _, _ in MODELS:
        if only and name not in only:
            continue
        env = dict(os.environ, MXNET_MKLDNN_ENABLED="1" if name in NEEDS_ONEDNN else "0")
        subprocess.run([sys.executable, os.path.abspath(__file__), "--out", out, "--one", name], env=env, check=True)


def record(name, block_class, inputs, out):
    os.makedirs(out, exist_ok=True)
    net = block_class(prefix=name + "_")
    net.initialize()
    net.hybridize()
    xs = [mx.nd.array(make_input(kind, shape)) for kind, shape in inputs]
    net(*xs)  # completes deferred shapes
    for p in net.collect_params().values():
        p.set_data(mx.nd.array(made_up(p.name, p.shape)))
    y = net(*xs)
    y = (y[0] if isinstance(y, (list, tuple)) else y).asnumpy()
    prefix = os.path.join(out, name)
    net.export(prefix)
    if name not in KEEP_PARAMS:
        os.remove(prefix + "-0000.params")
    np.save(prefix + "-output.npy", y.astype(np.float32))
    names = ["data"] if len(inputs) == 1 else ["data%d" % k for k in range(len(inputs))]
    with open(prefix + "-inputs.txt", "w") as f:
        for input_name, (kind, shape) in zip(names, inputs):
            f.write("%s %s %s\n" % (input_name, kind, "x".join(str(d) for d in shape)))
    print("%-20s output %s, |y|max %.4g" % (name, y.shape, abs(y).max()))


if __name__ == "__main__":
    main()
