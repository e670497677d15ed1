#!/usr/bin/env python3
"""AArch64 instructions one forward of generated armv8-a code executes, per function.

No AArch64 machine times the NEON kernels here; this counts what they execute
under qemu's user-mode emulator instead, a proxy for their cost (closest on
in-order cores), never a timing. It generates and builds the model with
`hybgen verify --target armv8-a --keep` (which checks the outputs too),
rebuilds the kept program with -O3 and runs it once under
`qemu-aarch64 -d in_asm,exec,nochain`, adding up each executed block's
instructions by the function it belongs to.

    python3 bench/arm_instructions.py MODEL.json [--hybgen build/hybgen] [--top 15] [-- HYBGEN_ARGS...]
    python3 bench/arm_instructions.py tests/data/mxnet-real/symbol-only/mobilenetv2-1.0-gluon-1.6-symbol.json \\
        -- --shape data=1,3,96,96 --random-weights 3

Needs aarch64-linux-gnu-g++ and qemu-aarch64 (Debian: g++-aarch64-linux-gnu qemu-user).
"""
import argparse
import collections
import glob
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def build(hybgen, model, hybgen_args):
    out = subprocess.run([hybgen, "verify", model, "--target", "armv8-a", "--keep", *hybgen_args],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("hybgen verify failed:\n" + out.stdout + out.stderr)
    kept = re.search(r"build kept in (\S+)", out.stdout)
    if not kept:
        sys.exit("hybgen verify printed no build folder:\n" + out.stdout)
    folder = kept.group(1)
    manifest = glob.glob(os.path.join(folder, "*.manifest.json"))[0]
    name = os.path.basename(manifest)[: -len(".manifest.json")]
    sources = [os.path.join(folder, f) for f in ("main.cpp", name + ".cpp", name + "_weights.cpp")]
    subprocess.run(["aarch64-linux-gnu-g++", "-march=armv8-a", "-std=c++11", "-O3", "-static", "-pthread",
                    "-I" + folder, *sources, "-o", os.path.join(folder, "program")], check=True)
    return folder


def count(folder):
    """Executed instructions per function: qemu logs each translated block
    (its address, function and instructions) and each execution of one."""
    size, function = {}, {}
    per_function = collections.Counter()
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "qemu.log")
        subprocess.run(["qemu-aarch64", "-d", "in_asm,exec,nochain", "-D", log,
                        os.path.join(folder, "program"), folder], check=True, capture_output=True)
        start, name, n = None, None, 0
        with open(log) as f:
            for line in f:
                if line.startswith("IN:"):
                    start, name, n = None, line[3:].strip(), 0
                elif line.startswith("0x") and ":" in line[:20]:
                    if start is None:
                        start = int(line.split(":")[0], 16)
                    n += 1
                    size[start], function[start] = n, name
                elif line.startswith("Trace"):
                    pc = int(re.search(r"\[[0-9a-f]+/([0-9a-f]+)/", line).group(1), 16)
                    per_function[function.get(pc, "?")] += size.get(pc, 0)
    return per_function


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("--hybgen", default=os.path.join(HERE, "..", "build", "hybgen"))
    parser.add_argument("--top", type=int, default=15, help="functions listed")
    argv = sys.argv[1:]
    hybgen_args = argv[argv.index("--") + 1:] if "--" in argv else []  # for hybgen verify
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    folder = build(args.hybgen, args.model, hybgen_args)
    per_function = count(folder)
    # The generated code's functions: its namespace's run() and kernels.
    name = os.path.basename(glob.glob(os.path.join(folder, "*.manifest.json"))[0])[: -len(".manifest.json")]
    ns = "%d%s" % (len(name), name)
    model = sum(n for f, n in per_function.items() if "_ZN" + ns in f or "_ZZN" + ns in f)
    print("%s: %d AArch64 instructions in the model's functions, %d in all (build in %s)" %
          (args.model, model, sum(per_function.values()), folder))
    for f, n in per_function.most_common(args.top):
        print("%12d  %s" % (n, f[:140]))


if __name__ == "__main__":
    main()
