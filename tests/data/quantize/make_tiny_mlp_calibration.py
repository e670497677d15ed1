#!/usr/bin/env python3
"""Writes tiny_mlp_calibration.npy: 32 seeded samples of the input of
examples/cmake-consumer/model/tiny_mlp.json (float32, shape (32, 8), values in
[-1, 1) as that model's test input), for tests/quantize_cmake_test.cmake.
Plain Python (no numpy), so that anyone can write it again:

    python3 make_tiny_mlp_calibration.py     # rewrites the file beside this script
"""
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES, FEATURES = 32, 8

rng = random.Random(37)
values = [rng.uniform(-1.0, 1.0) for _ in range(SAMPLES * FEATURES)]

# .npy version 1.0: magic, version, header length, a dict padded to 64 bytes.
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (SAMPLES, FEATURES)
header += " " * (63 - (10 + len(header)) % 64) + "\n"
with open(os.path.join(HERE, "tiny_mlp_calibration.npy"), "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
    f.write(struct.pack("<%df" % len(values), *values))
