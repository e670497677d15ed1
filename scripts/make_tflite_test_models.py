#!/usr/bin/env python3
"""Writes tests/data/tflite/: small TFLite models made with TensorFlow's
TFLiteConverter (float32, and int8 by full-integer post-training quantization
on a seeded representative dataset), each with inputs and the outputs the
TFLite interpreter computes for them with TFLite's own kernels (no XNNPACK
delegate; the reference kernels agree).

    python3 -m venv /tmp/tflvenv && /tmp/tflvenv/bin/pip install tensorflow-cpu numpy
    /tmp/tflvenv/bin/python scripts/make_tflite_test_models.py tests/data/tflite [HELLO_WORLD_MODELS]

HELLO_WORLD_MODELS: TensorFlow Lite Micro's folder
tensorflow/lite/micro/examples/hello_world/models/ (github.com/tensorflow/tflite-micro);
its hello_world_float.tflite and hello_world_int8.tflite (three FULLY_CONNECTED
layers, int8 input and output) are copied here with outputs on 16 inputs in
[0, 2 pi] (hello_world-input.npy; the int8 model's as real values,
hello_world_int8-input.npy).

Models (NHWC, batch 1; weights from a seeded generator):
  cnn        CONV_2D (SAME, fused RELU), DEPTHWISE_CONV_2D (stride 2, SAME,
             fused RELU6), MAX_POOL_2D, RESHAPE, FULLY_CONNECTED, SOFTMAX
  branches   CONV_2D (a PAD the converter folds into its padding), LOGISTIC, MUL, CONCATENATION, ADD,
             PAD, AVERAGE_POOL_2D (SAME), STRIDED_SLICE, MEAN, FULLY_CONNECTED
             (fused RELU_N1_TO_1 as a clip to [-1, 1])
Each as NAME_float.tflite and NAME_int8.tflite (float input and output,
QUANTIZE and DEQUANTIZE at the ends), and cnn_int8io.tflite (int8 input and
output). NAME-input.npy holds 4 samples stacked on axis 0 (the model's batch
is 1) and NAME_VARIANT-output.npy the interpreter's 4 outputs. The int8io
model's arrays are float32 too, as hybgen's graphs take and give them: the
real values (q - zero_point) * scale of TFLite's int8 input and output.
"""
import os
import sys

import warnings

import numpy as np
import tensorflow as tf

warnings.filterwarnings("ignore", category=UserWarning)  # tf.lite.Interpreter's deprecation
out_dir = sys.argv[1] if len(sys.argv) > 1 else "tests/data/tflite"
os.makedirs(out_dir, exist_ok=True)
rng = np.random.default_rng(20261201)


def weight(*shape, scale=0.3):
    return tf.constant((rng.standard_normal(shape) * scale).astype(np.float32))


class Cnn(tf.Module):
    def __init__(self):
        self.w1, self.b1 = weight(3, 3, 3, 8), weight(8, scale=0.1)
        self.w2, self.b2 = weight(3, 3, 8, 1), weight(8, scale=0.1)
        self.w3, self.b3 = weight(3 * 2 * 8, 5, scale=0.2), weight(5, scale=0.1)

    @tf.function(input_signature=[tf.TensorSpec([1, 12, 10, 3], tf.float32)])
    def __call__(self, x):
        y = tf.nn.relu(tf.nn.conv2d(x, self.w1, 1, "SAME") + self.b1)
        y = tf.nn.relu6(tf.nn.depthwise_conv2d(y, self.w2, [1, 2, 2, 1], "SAME") + self.b2)
        y = tf.nn.max_pool2d(y, 2, 2, "VALID")  # 6x5 -> 3x2
        y = tf.reshape(y, [1, -1])  # NHWC order
        return tf.nn.softmax(tf.matmul(y, self.w3) + self.b3)


class Branches(tf.Module):
    def __init__(self):
        self.w1, self.b1 = weight(3, 3, 4, 6), weight(6, scale=0.1)
        self.w2, self.b2 = weight(1, 1, 10, 10), weight(10, scale=0.1)
        self.w3, self.b3 = weight(10, 3), weight(3, scale=0.1)

    @tf.function(input_signature=[tf.TensorSpec([1, 8, 8, 4], tf.float32)])
    def __call__(self, x):
        p = tf.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]])
        c = tf.nn.conv2d(p, self.w1, 1, "VALID") + self.b1  # 8x8x6
        m = tf.sigmoid(x) * x  # 8x8x4
        cat = tf.concat([c, m], axis=3)  # 8x8x10
        a = cat + (tf.nn.conv2d(cat, self.w2, 1, "VALID") + self.b2)
        a = tf.pad(a, [[0, 0], [1, 0], [0, 1], [0, 0]])  # 9x9x10
        a = tf.nn.avg_pool2d(a, 3, 2, "SAME")  # 5x5x10
        s = tf.strided_slice(a, [0, 1, 0, 0], [1, 4, 5, 10], [1, 1, 2, 1])  # 3x3x10
        g = tf.reduce_mean(s, axis=[1, 2])  # 1x10
        return tf.clip_by_value(tf.matmul(g, self.w3) + self.b3, -1.0, 1.0)


def representative(shape):
    data = np.random.default_rng(7).standard_normal((64,) + tuple(shape[1:])).astype(np.float32)

    def gen():
        for i in range(data.shape[0]):
            yield [data[i:i + 1]]

    return gen


def convert(module, shape, int8, int8_io=False):
    fn = module.__call__.get_concrete_function()
    converter = tf.lite.TFLiteConverter.from_concrete_functions([fn], module)
    if int8:
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.representative_dataset = representative(shape)
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        if int8_io:
            converter.inference_input_type = tf.int8
            converter.inference_output_type = tf.int8
    return converter.convert()


# TFLite's own kernels. The default resolver also applies the XNNPACK
# delegate, whose int8 MEAN can round one step apart from them (branches_int8);
# the reference kernels (BUILTIN_REF, as TFLite Micro's) are checked to agree.
RESOLVER = tf.lite.experimental.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES


def run(model_bytes, x, resolver=RESOLVER):
    interp = tf.lite.Interpreter(model_content=model_bytes, experimental_op_resolver_type=resolver)
    interp.allocate_tensors()
    inp, out = interp.get_input_details()[0], interp.get_output_details()[0]
    ys = []
    for i in range(x.shape[0]):
        interp.set_tensor(inp["index"], x[i:i + 1])
        interp.invoke()
        ys.append(interp.get_tensor(out["index"]).copy())
    return np.concatenate(ys, axis=0)


def ops_of(model_bytes):
    interp = tf.lite.Interpreter(model_content=model_bytes, experimental_op_resolver_type=RESOLVER)
    return sorted({d["op_name"] for d in interp._get_ops_details()})


for name, module, shape in [("cnn", Cnn(), (1, 12, 10, 3)), ("branches", Branches(), (1, 8, 8, 4))]:
    x = np.random.default_rng(11).standard_normal((4,) + shape[1:]).astype(np.float32)
    np.save(os.path.join(out_dir, name + "-input.npy"), x)
    variants = [("float", False, False), ("int8", True, False)]
    if name == "cnn":
        variants.append(("int8io", True, True))
    for variant, int8, int8_io in variants:
        model = convert(module, shape, int8, int8_io)
        stem = name + "_" + variant
        with open(os.path.join(out_dir, stem + ".tflite"), "wb") as f:
            f.write(model)
        xin = x
        if int8_io:
            # hybgen's graphs take and give float32: the real values the int8
            # arrays stand for, (q - zero_point) * scale.
            interp = tf.lite.Interpreter(model_content=model)
            scale, zp = interp.get_input_details()[0]["quantization"]
            xin = np.clip(np.round(x / scale) + zp, -128, 127).astype(np.int8)
            real = ((xin.astype(np.float32) - zp) * np.float32(scale)).astype(np.float32)
            np.save(os.path.join(out_dir, stem + "-input.npy"), real)
        y = run(model, xin)
        ref = run(model, xin, tf.lite.experimental.OpResolverType.BUILTIN_REF)
        assert np.array_equal(y, ref) if int8 else np.allclose(y, ref, rtol=1e-5, atol=1e-6), stem
        xnnpack = np.abs(run(model, xin, tf.lite.experimental.OpResolverType.AUTO).astype(np.float32) - y).max()
        if int8_io:
            scale, zp = tf.lite.Interpreter(model_content=model).get_output_details()[0]["quantization"]
            y = ((y.astype(np.float32) - zp) * np.float32(scale)).astype(np.float32)
        np.save(os.path.join(out_dir, stem + "-output.npy"), y)
        print(stem, len(model), "bytes", ops_of(model), "output", y.shape, y.dtype, "XNNPACK differs by", xnnpack)


def hello_world(models_dir):
    x = np.linspace(0.0, 2 * np.pi, 16, dtype=np.float32).reshape(16, 1)
    np.save(os.path.join(out_dir, "hello_world-input.npy"), x)
    for variant in ["float", "int8"]:
        stem = "hello_world_" + variant
        with open(os.path.join(models_dir, stem + ".tflite"), "rb") as f:
            model = f.read()
        with open(os.path.join(out_dir, stem + ".tflite"), "wb") as f:
            f.write(model)
        interp = tf.lite.Interpreter(model_content=model)
        xin = x
        if variant == "int8":
            scale, zp = interp.get_input_details()[0]["quantization"]
            xin = np.clip(np.round(x / scale) + zp, -128, 127).astype(np.int8)
            real = ((xin.astype(np.float32) - zp) * np.float32(scale)).astype(np.float32)
            np.save(os.path.join(out_dir, stem + "-input.npy"), real)
        y = run(model, xin)
        # TFLite's reference FULLY_CONNECTED gives -63 and -110 where its own
        # kernels (and hybgen) give -64 and -109, at inputs 9 and 12: printed,
        # not asserted.
        ref = run(model, xin, tf.lite.experimental.OpResolverType.BUILTIN_REF)
        apart = np.abs(y.astype(np.int32) - ref.astype(np.int32)).max() if variant == "int8" else 0
        assert variant == "int8" or np.allclose(y, ref, rtol=1e-5, atol=1e-6), stem
        if variant == "int8":
            scale, zp = interp.get_output_details()[0]["quantization"]
            y = ((y.astype(np.float32) - zp) * np.float32(scale)).astype(np.float32)
        np.save(os.path.join(out_dir, stem + "-output.npy"), y)
        print(stem, len(model), "bytes", ops_of(model), "output", y.shape, "reference kernels differ by", apart,
              "steps")


if len(sys.argv) > 2:
    hello_world(sys.argv[2])
