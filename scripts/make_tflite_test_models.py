#!/usr/bin/env python3
"""Writes tests/data/tflite/: small TFLite models made with TensorFlow's
TFLiteConverter (float32, and int8 by full-integer post-training quantization
on a seeded representative dataset), each with inputs and the outputs the
TFLite interpreter computes for them with TFLite's own kernels (no XNNPACK
delegate; the reference kernels agree); and published int8 models (TFLite
Micro's examples, MLPerf Tiny's reference models) copied as they are, with
the outputs of TFLite's own kernels, TFLite's reference kernels and TFLite
Micro's interpreter.

    python3 -m venv /tmp/tflvenv && /tmp/tflvenv/bin/pip install tensorflow-cpu numpy tflite-micro
    /tmp/tflvenv/bin/python scripts/make_tflite_test_models.py tests/data/tflite \
        [--tflite-micro TFLITE_MICRO] [--mlperf-tiny TINY] [--published-only]

TFLITE_MICRO: a checkout of github.com/tensorflow/tflite-micro; TINY: one of
github.com/mlcommons/tiny. --published-only leaves the converter-made models.

Models made here (NHWC, batch 1; weights from a seeded generator):
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

Published models (PUBLISHED below; hello_world from TFLITE_MICRO's
examples/hello_world/models/, three FULLY_CONNECTED layers): NAME-input.npy
and NAME-output.npy (TFLite's own kernels), NAME-reference-output.npy
(TFLite's reference kernels, OpResolverType.BUILTIN_REF) and
NAME-tflm-output.npy (TFLite Micro), all real values as for int8io;
hello_world_int8_sweep-* are hello_world_int8 on every int8 input.
"""
import argparse
import os
import shutil

import warnings

import numpy as np
import tensorflow as tf

warnings.filterwarnings("ignore", category=UserWarning)  # tf.lite.Interpreter's deprecation
parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("out_dir", nargs="?", default="tests/data/tflite")
parser.add_argument("--tflite-micro", metavar="ROOT", help="a checkout of github.com/tensorflow/tflite-micro")
parser.add_argument("--mlperf-tiny", metavar="ROOT", help="a checkout of github.com/mlcommons/tiny")
parser.add_argument("--published-only", action="store_true", help="leave the converter-made models as they are")
args = parser.parse_args()
out_dir = args.out_dir
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


def made_models():
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




# ---------------------------------------------------------------- published int8 models

R = tf.lite.experimental.OpResolverType


def tflm_run(model_bytes, xq):
    """TensorFlow Lite Micro's interpreter (the `tflite-micro` package from
    PyPI: TFLM's reference kernels, as on a board without CMSIS-NN) on each
    sample."""
    from tflite_micro.python.tflite_micro import runtime

    interp = runtime.Interpreter.from_bytes(model_bytes)
    ys = []
    for i in range(xq.shape[0]):
        interp.set_input(xq[i:i + 1], 0)
        interp.invoke()
        ys.append(interp.get_output(0).copy())
    return np.concatenate(ys, axis=0)


def for_tflite(model_bytes):
    """The model as TFLite's interpreter accepts it. Old converters wrote a
    rank-1 per-channel bias with its filter's quantized_dimension (3), which
    TFLite refuses and TFLite Micro ignores; a rank-1 tensor has one axis,
    so it is set to 0 in a copy for the interpreter (the committed file is
    the published one)."""
    from tensorflow.lite.tools import flatbuffer_utils

    model = flatbuffer_utils.convert_bytearray_to_object(bytearray(model_bytes))
    changed = False
    for sg in model.subgraphs:
        for t in sg.tensors:
            q = t.quantization
            if q is not None and q.scale is not None and len(t.shape) == 1 and q.quantizedDimension != 0:
                q.quantizedDimension = 0
                changed = True
    return bytes(flatbuffer_utils.convert_object_to_bytearray(model)) if changed else model_bytes


def record(stem, model_bytes, xq, samples_name=None):
    """Writes STEM-input.npy (the real values (q - zero_point) * scale of the
    int8 inputs xq, as hybgen's float32 graph inputs take them) and the
    outputs, as real values, of TFLite's own kernels (STEM-output.npy),
    TFLite's reference kernels (STEM-reference-output.npy) and TFLite Micro
    (STEM-tflm-output.npy). Returns the three as int8 arrays."""
    interp = tf.lite.Interpreter(model_content=for_tflite(model_bytes))
    (iscale, izp), (oscale, ozp) = interp.get_input_details()[0]["quantization"], interp.get_output_details()[0][
        "quantization"]
    real_in = ((xq.astype(np.float32) - izp) * np.float32(iscale)).astype(np.float32)
    np.save(os.path.join(out_dir, (samples_name or stem) + "-input.npy"), real_in)
    runs = {"": run(for_tflite(model_bytes), xq), "-reference": run(for_tflite(model_bytes), xq, R.BUILTIN_REF),
            "-tflm": tflm_run(model_bytes, xq)}
    for suffix, y in runs.items():
        real = ((y.astype(np.float32) - ozp) * np.float32(oscale)).astype(np.float32)
        np.save(os.path.join(out_dir, (samples_name or stem) + suffix + "-output.npy"), real)
    builtin, reference, tflm = (runs[k].astype(np.int32) for k in ("", "-reference", "-tflm"))

    def apart(a, b):
        d = np.abs(a - b)
        return "%d of %d outputs apart (at most %d steps)" % ((d > 0).sum(), d.size, d.max())

    print("%-30s %7d bytes %s, output %s; TFLM vs TFLite: %s; vs TFLite reference: %s" %
          (samples_name or stem, len(model_bytes), ops_of(for_tflite(model_bytes)), runs[""].shape,
           apart(tflm, builtin), apart(tflm, reference)))
    return runs


def hello_world(tflm_root):
    models_dir = os.path.join(tflm_root, "tensorflow/lite/micro/examples/hello_world/models")
    x = np.linspace(0.0, 2 * np.pi, 16, dtype=np.float32).reshape(16, 1)
    np.save(os.path.join(out_dir, "hello_world-input.npy"), x)
    stem = "hello_world_float"
    shutil.copyfile(os.path.join(models_dir, stem + ".tflite"), os.path.join(out_dir, stem + ".tflite"))
    with open(os.path.join(models_dir, stem + ".tflite"), "rb") as f:
        model = f.read()
    y = run(model, x)
    assert np.allclose(y, run(model, x, R.BUILTIN_REF), rtol=1e-5, atol=1e-6), stem
    np.save(os.path.join(out_dir, stem + "-output.npy"), y)
    print(stem, len(model), "bytes", ops_of(model), "output", y.shape)

    stem = "hello_world_int8"
    shutil.copyfile(os.path.join(models_dir, stem + ".tflite"), os.path.join(out_dir, stem + ".tflite"))
    with open(os.path.join(models_dir, stem + ".tflite"), "rb") as f:
        model = f.read()
    scale, zp = tf.lite.Interpreter(model_content=model).get_input_details()[0]["quantization"]
    record(stem, model, np.clip(np.round(x / scale) + zp, -128, 127).astype(np.int8))
    # Every int8 input: TFLite's reference FULLY_CONNECTED requantizes in
    # double precision (round(acc * s_in * s_w / s_out)), TFLite's own
    # kernels round the last shift's ties upward, TFLite Micro's (and
    # hybgen's) are gemmlowp's fixed point (docs/tflite.md).
    record(stem, model, np.arange(-128, 128, dtype=np.int8).reshape(256, 1), "hello_world_int8_sweep")


def bmp_gray(path):
    """A 96x96 8-bit grayscale BMP (TFLite Micro's person_detection test
    images) as uint8 rows top to bottom."""
    with open(path, "rb") as f:
        data = f.read()
    offset, width, height, bits = (int.from_bytes(data[10:14], "little"), int.from_bytes(data[18:22], "little"),
                                   int.from_bytes(data[22:26], "little", signed=True), data[28])
    assert bits == 8 and width % 4 == 0, path
    pixels = np.frombuffer(data, np.uint8, width * abs(height), offset).reshape(abs(height), width)
    return pixels[::-1] if height > 0 else pixels


# (name in tests/data/tflite, repository, path in it)
PUBLISHED = [
    ("micro_speech_quantized", "tflite-micro", "tensorflow/lite/micro/examples/micro_speech/models/"),
    ("person_detect", "tflite-micro", "tensorflow/lite/micro/models/"),
    ("kws_ref_model", "tiny", "benchmark/training/keyword_spotting/trained_models/"),
    ("vww_96_int8", "tiny", "benchmark/training/visual_wake_words/trained_models/"),
    ("pretrainedResnet_quant", "tiny", "benchmark/training/image_classification/trained_models/"),
    ("ad01_int8", "tiny", "benchmark/training/anomaly_detection/trained_models/"),
]


def published(roots):
    """TFLite Micro's example models and MLPerf Tiny's reference models, int8
    in and out, copied as published. Inputs: for the 96x96 image models TFLite
    Micro's two test images (person, no person; pixel - 128, as its example
    feeds them, three equal channels for visual wake words), for the others
    4 samples of seeded uniform int8."""
    images = None
    if roots.get("tflite-micro"):
        testdata = os.path.join(roots["tflite-micro"], "tensorflow/lite/micro/examples/person_detection/testdata")
        images = np.stack([bmp_gray(os.path.join(testdata, n + ".bmp")) for n in ("person", "no_person")])
        images = (images.astype(np.int16) - 128).astype(np.int8)
    for name, repo, folder in PUBLISHED:
        if not roots.get(repo):
            continue
        src = os.path.join(roots[repo], folder, name + ".tflite")
        shutil.copyfile(src, os.path.join(out_dir, name + ".tflite"))
        with open(src, "rb") as f:
            model = f.read()
        shape = tuple(tf.lite.Interpreter(model_content=for_tflite(model)).get_input_details()[0]["shape"])
        if shape[1:] in [(96, 96, 1), (96, 96, 3)] and images is not None:
            xq = np.repeat(images[..., None], shape[3], axis=3)
        else:
            xq = np.random.default_rng(20261202).integers(-128, 128, (4,) + shape[1:]).astype(np.int8)
        record(name, model, xq)


if not args.published_only:
    made_models()
if args.tflite_micro:
    hello_world(args.tflite_micro)
published({"tflite-micro": args.tflite_micro, "tiny": args.mlperf_tiny})
