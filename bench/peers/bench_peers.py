#!/usr/bin/env python3
"""hybgen's generated code against the runtimes people use, same model, same input, one thread.

    python3.11 bench/peers/bench_peers.py [--models seed_mlp_b1,seed_mlp_b64,lenet,resnet18_v1,mobilenet_v2,transformer_encoder]
                                          [--onnx [NAME=]MODEL.onnx ...] [--shape INPUT=D1,D2,... ...]
                                          [--rounds 5] [--runs 30] [--warmup 10] [--build build-peers]
                                          [--no-torch] [--no-install] [--cpu N] [--out build-peers/peers.json]
    python3.11 bench/peers/bench_peers.py --quantize int8 [--models ...] [--calibration-samples 16]

For each model it
  1. exports it: seed_mlp_bN with examples/mlp's export_mlp (batch N), the zoo
     models with examples/zoo's export_zoo (Xavier seed 42, the zoo's input);
  2. converts it to ONNX (to_onnx.py) and checks the conversion: ONNX Runtime's
     output on the benchmark input against hybgen's generated code through
     `hybgen verify --expected` (1e-4 relative);
  3. times, each in a FRESH process, the runners below, alternating them for
     --rounds rounds (the order rotates every round), and reports the median
     over rounds of each process's median latency:
       hybgen_generated   `hybgen bench MODEL.json --runs N --warmup W` (the generated
                          C++ built with -O3 -march=native, a static arena; with
                          --hybgen-target T generated for target T instead, e.g.
                          x86-64-v3 to time the AVX2 code on an AVX-512 machine)
       hybgen_eager,      runtime-lite's eager and hybridized (cached graph,
       hybgen_hybridized  reference kernels + OpenBLAS) in-process: export_zoo --time
       onnxruntime        ONNX Runtime: 1 intra-op / 1 inter-op thread, sequential,
                          graph optimizations ALL, IOBinding (peer_runner.py)
       torch_eager,       PyTorch on the onnx2torch module: eager (inference_mode) and
       torchscript        trace + freeze + optimize_for_inference; set_num_threads(1)
A model the user gives as an ONNX file (--onnx NAME=MODEL.onnx, or an entry of
--models ending in .onnx) is timed as it is: `hybgen bench MODEL.onnx` on the
code generated from that file, and ONNX Runtime (and PyTorch through
onnx2torch) on that very file, external data and all; step 1 is skipped, step 2
compares ONNX Runtime's output with the generated code's, and the hybgen eager
runtime, which runs Gluon-style models only, is left out. --shape INPUT=D1,...
gives inputs whose dims the file leaves symbolic (a dynamic batch), to hybgen
and the peers alike. With --onnx and no --models, only the ONNX files run.

With --quantize int8 (default models seed_mlp_b1, resnet18_v1, mobilenet_v2,
transformer_encoder; PyTorch and the hybgen runtime left out) each model is also
quantized, on the same seeded N(0, 1) calibration samples (--calibration-samples,
seed 20261129), twice:
       hybgen_int8        `hybgen quantize MODEL.json --calibration calib.npy` (minmax),
                          timed by `hybgen bench` like hybgen_generated, so generated
                          for this machine's target (x86-64-v4-vnni on a VNNI core)
       onnxruntime_int8   ONNX Runtime's quantize_static on the converted ONNX model:
                          QDQ format, int8 activations and weights (S8S8), per-channel
                          weights, MinMax, timed like onnxruntime
and the table gives, from the same run, each runtime's int8 speed-up over its own
float32 and hybgen int8 / ONNX Runtime int8, with the CPU's model, family and
whether it has VNNI. Both int8 outputs on the benchmark input are compared with
ONNX Runtime's float32 output (err: quantization error, not a conversion check).

Every runner gets the same input values (those `hybgen bench` uses:
((k * 37 + i) % 101) / 50 - 1 for element k of input i) and the same
environment: OMP/MKL/OPENBLAS_NUM_THREADS=1, OPENBLAS_CORETYPE, fixed glibc
malloc thresholds (MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_), no CUDA
devices. The peers' outputs are compared with ONNX Runtime's (checked against
hybgen) and any error above 1e-3 relative is flagged in the table.

Python packages come from PyPI into a virtualenv (--venv, default
build-peers/venv, created on the first run; run this script with any Python 3.11, it re-executes itself in the
venv): numpy, onnx, onnxruntime, sympy, and unless --no-torch, torch and onnx2torch
(torch from PyPI is several GB with CUDA libraries; it is skipped when the disk
has under 15 GB free or the install fails, and the output says so). A peer
that cannot be installed is skipped and named. None of this is needed by
hybgen itself or its tests.

BUILD is a hybgen build folder with the targets hybgen, export_mlp and
export_zoo (`cmake --build BUILD -j2 --target hybgen export_mlp export_zoo`).
Output: the machine, versions and environment, then a table of medians per
model and runner with ratios against hybgen's generated code and
(generated / fastest peer), also written as JSON to --out.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DEFAULT_BUILD = REPO / "build-peers"
LARGE_WEIGHTS_BYTES = 256 << 20
DEFAULT_MODELS = "seed_mlp_b1,seed_mlp_b64,lenet,resnet18_v1,mobilenet_v2,transformer_encoder"
QUANTIZE_MODELS = "seed_mlp_b1,resnet18_v1,mobilenet_v2,transformer_encoder"
QUANTIZE_RUNNERS = "hybgen_generated,hybgen_int8,onnxruntime,onnxruntime_int8"
INT8_RUNNERS = ["hybgen_int8", "onnxruntime_int8"]
CALIBRATION_SEED = 20261129
PEERS = ["onnxruntime", "torch_eager", "torchscript"]
HYBGEN_RUNNERS = ["hybgen_generated", "hybgen_eager", "hybgen_hybridized"]
BASE_PACKAGES = ["numpy", "onnx", "onnxruntime", "sympy"]  # sympy: ONNX Runtime's quant_pre_process
TORCH_PACKAGES = ["torch", "onnx2torch"]
TORCH_MIN_FREE_GB = 15
PEER_TOLERANCE = 1e-3

# The environment every runner gets (glibc reads the malloc variables at start-up:
# a fixed mmap threshold stops its dynamic adjustment, 32 MiB is the largest it takes).
FIXED_ENV = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MALLOC_MMAP_THRESHOLD_": str(32 << 20),
    "MALLOC_TRIM_THRESHOLD_": str(256 << 20),
    "CUDA_VISIBLE_DEVICES": "",
    "PYTHONHASHSEED": "0",
    "PYTHONWARNINGS": "ignore",
}


def log(msg: str = "") -> None:
    print(msg, flush=True)


# ---------------------------------------------------------------- the virtualenv

def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def pip_install(venv: Path, packages: list[str], timeout: int) -> tuple[bool, str]:
    try:
        r = subprocess.run([str(venv_python(venv)), "-m", "pip", "install", "--disable-pip-version-check", "-q",
                            *packages], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, f"pip install {' '.join(packages)} took over {timeout} s"
    tail = (r.stderr or r.stdout).strip().splitlines()[-3:]
    return r.returncode == 0, "; ".join(tail)


def bootstrap(args) -> None:
    """Create the venv with the peers' packages and re-run this script inside it."""
    venv = Path(args.venv)
    if os.environ.get("HYBGEN_PEERS_IN_VENV") == "1":
        return
    status_file = venv / "peers-install.json"
    status = json.loads(status_file.read_text()) if status_file.exists() else {}
    if not venv_python(venv).exists():
        if args.no_install:
            sys.exit(f"bench_peers: {venv} does not exist and --no-install was given")
        log(f"creating {venv}")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    if not args.no_install:
        if status.get("base") != "ok":
            log(f"installing {' '.join(BASE_PACKAGES)} into {venv} (PyPI)")
            ok, msg = pip_install(venv, BASE_PACKAGES, 1200)
            status["base"] = "ok" if ok else f"failed: {msg}"
        want_torch = not args.no_torch
        if want_torch and (status.get("torch") != "ok" or args.retry_install):
            free_gb = shutil.disk_usage(venv).free / 2 ** 30
            if free_gb < TORCH_MIN_FREE_GB:
                status["torch"] = f"skipped: {free_gb:.0f} GB free on disk, torch needs about {TORCH_MIN_FREE_GB}"
            elif status.get("torch", "").startswith("failed") and not args.retry_install:
                pass  # failed before: say so below, do not spend the time again (--retry-install)
            else:
                log(f"installing {' '.join(TORCH_PACKAGES)} into {venv} (PyPI; several GB, may take minutes)")
                t0 = time.time()
                ok, msg = pip_install(venv, TORCH_PACKAGES, 2400)
                status["torch"] = "ok" if ok else f"failed: {msg}"
                log(f"  {'done' if ok else 'failed'} in {time.time() - t0:.0f} s")
        status_file.write_text(json.dumps(status, indent=2))
    env = dict(os.environ, HYBGEN_PEERS_IN_VENV="1")
    os.execve(str(venv_python(venv)), [str(venv_python(venv)), str(Path(__file__).resolve()), *sys.argv[1:]], env)


def available_peers(args) -> dict[str, str | None]:
    """Runner -> None when usable, else why not."""
    import importlib.util

    status_file = Path(args.venv) / "peers-install.json"
    status = json.loads(status_file.read_text()) if status_file.exists() else {}
    out = {}
    have = lambda m: importlib.util.find_spec(m) is not None  # noqa: E731
    out["onnxruntime"] = None if have("onnxruntime") else f"onnxruntime not installed ({status.get('base', '?')})"
    if args.no_torch:
        reason = "--no-torch"
    elif not have("torch"):
        reason = f"torch not installed ({status.get('torch', 'not tried')})"
    elif not have("onnx2torch"):
        reason = "onnx2torch not installed (PyTorch runs the ONNX model through it)"
    else:
        reason = None
    out["torch_eager"] = out["torchscript"] = reason
    return out


# ---------------------------------------------------------------- the machine

def machine_info() -> dict:
    info = {"platform": platform.platform(), "python": platform.python_version(), "cpus_online": os.cpu_count()}
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        fields = dict(re.findall(r"^([^:\n]+):\s*(.*)$", text, re.M))
        info["cpu"] = fields.get("Model name", "?")
        for k in ("CPU family", "Model", "Thread(s) per core", "Core(s) per socket", "L1d cache", "L2 cache",
                  "L3 cache", "Hypervisor vendor"):
            if k in fields:
                info[k] = fields[k]
        flags = set(fields.get("Flags", "").split())
        notable = ["avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx_vnni", "avx512_bf16",
                   "avx512_fp16", "amx_tile", "amx_bf16", "asimddp"]
        info["flags_of_note"] = [f for f in notable if f in flags]
        info["vnni"] = "avx512_vnni" in flags or "avx_vnni" in flags
    except FileNotFoundError:
        info["cpu"] = platform.processor()
    for name, path in [("governor", "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
                       ("transparent_hugepage", "/sys/kernel/mm/transparent_hugepage/enabled")]:
        try:
            info[name] = Path(path).read_text().strip()
        except OSError:
            pass
    return info


def openblas_info(hybgen: str) -> str:
    """The OpenBLAS the hybgen runtime links, and the kernels it picks in the benchmark environment."""
    try:
        ldd = subprocess.run(["ldd", hybgen], capture_output=True, text=True).stdout
        m = re.search(r"(libopenblas[^\s]*|libblas[^\s]*)\s+=>\s+(\S+)", ldd)
        if not m:
            return "not linked"
        code = ("import ctypes,sys; l=ctypes.CDLL(sys.argv[1]); f=l.openblas_get_config; f.restype=ctypes.c_char_p;"
                "c=getattr(l,'openblas_get_corename',None);"
                "print(f().decode(), '/ core', (c.__setattr__('restype',ctypes.c_char_p) or c().decode()) if c else '?')")
        r = subprocess.run([sys.executable, "-c", code, m.group(2)], capture_output=True, text=True, env=runner_env())
        return f"{m.group(2)}: {r.stdout.strip() or r.stderr.strip()[-200:]}"
    except OSError as e:
        return f"? ({e})"


def versions(hybgen: str) -> dict:
    from importlib import metadata

    v = {}
    for p in ["numpy", "onnx", "onnxruntime", "torch", "onnx2torch"]:
        try:
            v[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            v[p] = None
    cxx = os.environ.get("CXX") or "c++"
    try:
        v["compiler"] = f"{cxx}: " + subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    except (OSError, IndexError):
        v["compiler"] = f"{cxx}: ?"
    v["hybgen"] = subprocess.run([hybgen, "--version"], capture_output=True, text=True).stdout.strip()
    v["openblas"] = openblas_info(hybgen)
    return v


_CORETYPE = None


def runner_env() -> dict:
    env = dict(os.environ)
    env.update(FIXED_ENV)
    env["OPENBLAS_CORETYPE"] = _CORETYPE or ""
    env.pop("HYBGEN_PEERS_IN_VENV", None)
    return env


def default_coretype() -> str:
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""
    if " avx512f" in flags:
        return "SKYLAKEX"
    return "HASWELL" if " avx2" in flags else ""


# ---------------------------------------------------------------- processes

class RunFailed(Exception):
    pass


def run(cmd: list[str], timeout: float, cpu: int | None = None) -> str:
    pre = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    try:
        r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, env=runner_env(),
                           preexec_fn=pre)
    except subprocess.TimeoutExpired:
        raise RunFailed(f"timed out after {timeout:.0f} s: {' '.join(map(str, cmd))}")
    if r.returncode != 0:
        raise RunFailed(f"exit {r.returncode}: {' '.join(map(str, cmd))}\n{(r.stderr or r.stdout).strip()[-1500:]}")
    return r.stdout


def find_tool(build: Path, *names: str) -> str | None:
    for n in names:
        p = build / n
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    return None


def model_spec(name: str):
    """(exporter kind, zoo name, batch) of a model name."""
    m = re.fullmatch(r"seed_mlp_b(\d+)", name)
    if m:
        return "mlp", "seed_mlp", int(m.group(1))
    m = re.fullmatch(r"(.+)_b(\d+)", name)
    if m:
        return "zoo", m.group(1), int(m.group(2))
    return "zoo", name, 1


def time_runner(runner: str, ctx: dict, args) -> dict[str, dict]:
    """One fresh process; returns {runner name: {min_us, median_us, max_us, ...}}."""
    runs, warmup = ctx["runs"], args.warmup
    if runner in ("hybgen_generated", "hybgen_int8"):
        model = ctx["json"] if runner == "hybgen_generated" else ctx["int8_json"]
        out = run([ctx["hybgen"], "bench", model, "--runs", runs, "--warmup", warmup] + ctx["hybgen_flags"],
                  args.timeout, args.cpu)
        m = re.search(r"latency us: min ([\d.]+)\s+median ([\d.]+)\s+max ([\d.]+)", out)
        c = re.search(r"compiled in ([\d.]+) s", out)
        f = re.search(r"built with (.*) \(compiled in", out)
        if not m:
            raise RunFailed(f"hybgen bench printed no latency:\n{out}")
        rep = {"min_us": float(m.group(1)), "median_us": float(m.group(2)), "max_us": float(m.group(3)),
               "compile_s": float(c.group(1)) if c else None, "cxx_flags": f.group(1) if f else None}
        if runner == "hybgen_int8":
            rep["max_rel_err"] = ctx.get("int8_err")
        return {runner: rep}
    if runner == "hybgen_in_process":
        kind, zoo_name, batch = model_spec(ctx["name"])
        eager_runs = ctx["eager_runs"]
        out = run([ctx["export_zoo"], zoo_name, "-", batch, "--time", eager_runs, "--warmup", min(warmup, 3)],
                  args.timeout, args.cpu)
        res = {}
        for label in ("eager", "hybridized"):
            m = re.search(label + r"_us ([\d.]+) ([\d.]+) ([\d.]+)", out)
            if not m:
                raise RunFailed(f"export_zoo printed no {label} timing:\n{out}")
            res["hybgen_" + label] = {"min_us": float(m.group(1)), "median_us": float(m.group(2)),
                                      "max_us": float(m.group(3))}
        return res
    # onnxruntime_int8 is peer_runner's onnxruntime on ONNX Runtime's quantized model.
    peer, onnx_file = ("onnxruntime", ctx["int8_onnx"]) if runner == "onnxruntime_int8" else (runner, ctx["onnx"])
    cmd = [sys.executable, HERE / "peer_runner.py", peer, onnx_file, "--runs", runs, "--warmup", warmup]
    for text in ctx.get("shapes", []):
        cmd += ["--shape", text]
    for name, path in ctx["expected"].items():
        cmd += ["--expected", f"{name}={path}"]
    out = run(cmd, args.timeout, args.cpu)
    rep = json.loads(out.strip().splitlines()[-1])
    return {runner: rep}


# ---------------------------------------------------------------- per model

def prepare_model(name: str, args, tools: dict, work: Path) -> dict:
    """Export, convert, check. Returns the model's context (with 'peer_skip' when ONNX is unusable)."""
    sys.path.insert(0, str(HERE))
    kind, zoo_name, batch = model_spec(name)
    prefix = work / name
    ctx = {"name": name, "hybgen": tools["hybgen"], "export_zoo": tools["export_zoo"], "json": str(prefix) + ".json", "onnx": str(prefix) + ".onnx",
           "expected": {}, "peer_skip": None, "check": None}
    t0 = time.perf_counter()
    if kind == "mlp":
        if not tools["export_mlp"]:
            raise RunFailed("export_mlp not built")
        run([tools["export_mlp"], prefix, batch], args.timeout)
    else:
        if not tools["export_zoo"]:
            raise RunFailed("export_zoo not built")
        run([tools["export_zoo"], zoo_name, prefix, batch], args.timeout)
    # The exporter ran the model once eagerly and once hybridized (the first call traces):
    # an upper bound for one eager + one hybridized call, used to size the eager timing.
    ctx["export_s"] = time.perf_counter() - t0
    model = json.loads(Path(ctx["json"]).read_text())
    ctx["inputs"] = {i["name"]: i["shape"] for i in model["inputs"]}
    # Weights this large (VGG-11's 531 MB) take a compiler tens of GB as a string
    # literal: the generated code reads them from NAME.weights.bin instead.
    ctx["hybgen_flags"] = []
    if Path(str(prefix) + ".safetensors").stat().st_size > LARGE_WEIGHTS_BYTES:
        ctx["hybgen_flags"] = ["--external-weights"]
        log("  weights over 256 MiB: hybgen verify and bench with --external-weights")
    if args.hybgen_target:
        ctx["hybgen_flags"] += ["--target", args.hybgen_target]
    try:
        import to_onnx
        from peer_runner import bench_input
    except ImportError as e:
        ctx["peer_skip"] = f"numpy is not installed: {e}"
        return ctx
    try:
        to_onnx.convert(ctx["json"], ctx["onnx"], hybgen=tools["hybgen"])
    except to_onnx.ConversionError as e:
        ctx["peer_skip"] = f"ONNX conversion failed: {e}"
        return ctx
    except ImportError as e:
        ctx["peer_skip"] = f"onnx not installed: {e}"
        return ctx
    try:
        feeds = {n: bench_input(s, i) for i, (n, s) in enumerate(ctx["inputs"].items())}
        r = to_onnx.check(ctx["json"], ctx["onnx"], hybgen=tools["hybgen"], tolerance=args.tolerance, inputs=feeds,
                          quiet=True, hybgen_flags=ctx["hybgen_flags"])
        ctx["check"] = {"ok": r["ok"], "max_rel_err": r["outputs"]}
        if not r["ok"]:
            ctx["check"]["verify_output"] = r["text"][-2000:]
            log(f"  conversion check FAILED:\n{r['text']}")
        stem = Path(ctx["onnx"]).stem
        for o in model["outputs"]:
            ctx["expected"][o] = str(work / f"{stem}.y.{to_onnx_file_part(o)}.npy")
    except ImportError as e:
        ctx["check"] = {"ok": None, "note": f"onnxruntime not installed: {e}"}
    return ctx


def prepare_int8(ctx: dict, args, work: Path) -> None:
    """--quantize int8: the model quantized by hybgen and by ONNX Runtime on the same seeded calibration
    samples. Sets ctx int8_json (hybgen's), int8_onnx (ONNX Runtime's QDQ model), int8_err (hybgen int8's
    output on the benchmark input against ONNX Runtime's float32) and int8_summary."""
    import numpy as np
    from peer_runner import bench_input

    name = ctx["name"]
    if len(ctx["inputs"]) != 1:
        raise RunFailed(f"{name}: int8 calibration takes a model with one input, this one has {len(ctx['inputs'])}")
    (input_name, shape), = ctx["inputs"].items()
    rng = np.random.default_rng(CALIBRATION_SEED)
    calib = rng.standard_normal((args.calibration_samples * shape[0], *shape[1:])).astype(np.float32)
    calib_path = work / f"{name}.calibration.npy"
    np.save(calib_path, calib)
    prefix = work / f"{name}_int8"
    out = run([ctx["hybgen"], "quantize", ctx["json"], "--calibration", calib_path, "-o", prefix], args.timeout)
    ctx["int8_json"] = str(prefix) + ".json"
    counts = dict(re.findall(r"^(int8|float) \((\d+)\)", out, re.M))
    ctx["int8_summary"] = {"hybgen_int8_nodes": int(counts.get("int8", 0)),
                           "hybgen_float_nodes": int(counts.get("float", 0)),
                           "calibration": f"{len(calib)} seeded N(0, 1) samples (seed {CALIBRATION_SEED})"}
    log(f"  hybgen quantize: {counts.get('int8', '?')} nodes int8, {counts.get('float', '?')} float")

    # hybgen int8 on the benchmark input (`hybgen run`: the generic target's code, which gives
    # the same int8 bits as every target's), against ONNX Runtime's float32 output there.
    x_path = work / f"{name}.bench_x.npy"
    np.save(x_path, bench_input(shape, 0))
    cmd = [ctx["hybgen"], "run", ctx["int8_json"], "--input", f"{input_name}={x_path}"]
    y_paths = {o: work / f"{name}_int8.y.{to_onnx_file_part(o)}.npy" for o in ctx["expected"]}
    for o, path in y_paths.items():
        cmd += ["--output", f"{o}={path}"]
    try:
        run(cmd, args.timeout)
        errs = {}
        for o, path in y_paths.items():
            want, got = np.load(ctx["expected"][o]), np.load(path)
            errs[o] = float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-30))
        ctx["int8_err"] = errs
    except RunFailed as e:
        log(f"  hybgen run on the int8 model failed: {e}")

    if ctx.get("peer_skip"):
        return
    try:
        from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                              quantize_static)
    except ImportError as e:
        ctx["int8_onnx_skip"] = f"onnxruntime.quantization not available: {e}"
        return

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.batches = iter(range(0, len(calib), shape[0]))

        def get_next(self):
            first = next(self.batches, None)
            return None if first is None else {input_name: calib[first:first + shape[0]]}

    import logging

    logging.getLogger().setLevel(logging.ERROR)  # quantize_static's advice to pre-process, taken below
    # ONNX Runtime's documented first step: shape inference and graph optimization for quantization.
    source, how = ctx["onnx"], "pre-processed by quant_pre_process"
    try:
        from onnxruntime.quantization.shape_inference import quant_pre_process

        pre = work / f"{name}_preprocessed.onnx"
        quant_pre_process(ctx["onnx"], str(pre))
        source = str(pre)
    except Exception as e:  # noqa: BLE001 (any failure: quantize the model as it is, and say so)
        how = f"not pre-processed ({type(e).__name__}: {str(e)[:80]})"
    int8_onnx = work / f"{name}_int8_qdq.onnx"
    t0 = time.perf_counter()
    quantize_static(source, str(int8_onnx), Reader(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8, per_channel=True,
                    calibrate_method=CalibrationMethod.MinMax)
    ctx["int8_onnx"] = str(int8_onnx)
    ctx["int8_summary"]["onnxruntime"] = how
    log(f"  ONNX Runtime quantize_static (QDQ, S8S8, per channel, MinMax; {how}): {time.perf_counter() - t0:.1f} s")


def onnx_weight_bytes(path: Path) -> int:
    """The bytes of an ONNX file's initializers: the file itself and its external data files."""
    import onnx

    m = onnx.load(str(path), load_external_data=False)
    total = path.stat().st_size
    locations = {e.value for t in m.graph.initializer for e in t.external_data if e.key == "location"}
    for loc in locations:
        f = path.parent / loc
        if f.is_file():
            total += f.stat().st_size
    return total


def prepare_onnx_model(name: str, path: str, args, tools: dict, work: Path) -> dict:
    """A model given as an ONNX file: every runner takes that file as it is. Returns its context."""
    sys.path.insert(0, str(HERE))
    onnx_path = Path(path).resolve()
    if not onnx_path.is_file():
        raise RunFailed(f"{path}: no such file")
    ctx = {"name": name, "hybgen": tools["hybgen"], "export_zoo": None, "json": str(onnx_path),
           "onnx": str(onnx_path), "expected": {}, "peer_skip": None, "check": None, "export_s": 0.0,
           "shapes": [], "hybgen_flags": [], "onnx_file": True}
    try:
        import onnx
        import to_onnx
        from peer_runner import bench_input, onnx_io, parse_shapes
    except ImportError as e:
        raise RunFailed(f"numpy and onnx are needed to read an ONNX file's inputs: {e}")
    m = onnx.load(str(onnx_path), load_external_data=False)
    initializers = {t.name for t in m.graph.initializer}
    input_names = {i.name for i in m.graph.input if i.name not in initializers}
    # --shape applies to the files that have that input (several files may be given).
    ctx["shapes"] = [text for text in args.shape if text.partition("=")[0] in input_names]
    ctx["hybgen_flags"] = [f for text in ctx["shapes"] for f in ("--shape", text)]
    if onnx_weight_bytes(onnx_path) > LARGE_WEIGHTS_BYTES:
        ctx["hybgen_flags"].append("--external-weights")
        log("  weights over 256 MiB: hybgen verify and bench with --external-weights")
    if args.hybgen_target:
        ctx["hybgen_flags"] += ["--target", args.hybgen_target]
    try:
        inputs, _ = onnx_io(str(onnx_path), parse_shapes(ctx["shapes"]))
    except SystemExit as e:  # a symbolic dim without --shape: onnx_io says which
        raise RunFailed(str(e))
    ctx["inputs"] = dict(inputs)
    try:
        feeds = {n: bench_input(s, i) for i, (n, s) in enumerate(inputs)}
        outs = to_onnx.run_onnxruntime(str(onnx_path), feeds)
    except ImportError as e:
        ctx["check"] = {"ok": None, "note": f"onnxruntime not installed: {e}"}
        return ctx
    r = to_onnx.verify_expected(tools["hybgen"], str(onnx_path), feeds, outs, work / to_onnx_file_part(name),
                                args.tolerance,
                                quiet=True, hybgen_flags=ctx["hybgen_flags"])
    ctx["check"] = {"ok": r["ok"], "max_rel_err": r["outputs"]}
    if not r["ok"]:
        ctx["check"]["verify_output"] = r["text"][-2000:]
        log(f"  ONNX Runtime vs generated code FAILED:\n{r['text']}")
    for o in outs:
        ctx["expected"][o] = str(work / f"{to_onnx_file_part(name)}.y.{to_onnx_file_part(o)}.npy")
    return ctx


def to_onnx_file_part(name: str) -> str:
    """How to_onnx.verify_expected spells an output name in a file name."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def summarize(samples: list[dict]) -> dict:
    med = [s["median_us"] for s in samples]
    out = {"median_us": statistics.median(med), "round_medians_us": med,
           "min_us": min(s["min_us"] for s in samples), "rounds": len(samples)}
    errs = [s.get("max_rel_err") for s in samples if s.get("max_rel_err")]
    if errs:
        out["max_rel_err"] = errs[-1]
    for k in ("compile_s", "timer_us", "setup_s", "call_floor_us"):
        vals = [s[k] for s in samples if s.get(k) is not None]
        if vals:
            out[k] = statistics.median(vals)
    if samples and samples[-1].get("versions"):
        out["versions"] = samples[-1]["versions"]
    if samples and samples[-1].get("cxx_flags"):
        out["cxx_flags"] = samples[-1]["cxx_flags"]
    return out


def model_list(args) -> list[tuple[str, str | None]]:
    """(name, ONNX file or None) of every model to run: --models, then --onnx."""
    models = args.models if args.models is not None else ("" if args.onnx else DEFAULT_MODELS)
    items = [(m.strip(), False) for m in models.split(",") if m.strip()] + [(m, True) for m in args.onnx]
    out = []
    for item, from_onnx_flag in items:
        name, path = None, None
        if item.endswith(".onnx"):
            head, sep, tail = item.partition("=")
            name, path = (head, tail) if sep and tail.endswith(".onnx") else (Path(item).stem, item)
        elif from_onnx_flag:
            sys.exit(f"bench_peers: --onnx {item!r} must look like [NAME=]MODEL.onnx")
        else:
            name = item
        if not name or any(n == name for n, _ in out):
            sys.exit(f"bench_peers: two models are called {name!r}: name them with --onnx NAME=MODEL.onnx")
        out.append((name, path))
    return out


def fmt_us(us: float | None) -> str:
    if us is None:
        return "-"
    return f"{us:.1f}" if us < 10000 else f"{us / 1000:.2f}ms"


def int8_table(result: dict) -> None:
    """--quantize int8: the ratios, all from this run; also stored as result["int8_table"]."""
    mi = result["machine"]
    log()
    log(f"== int8 on {mi.get('cpu')} (family {mi.get('CPU family', '?')}, model {mi.get('Model', '?')}, "
        f"VNNI: {'yes' if mi.get('vnni') else 'no'}), one thread; medians (us); err against ONNX Runtime float32")
    log("   speed-up = float32 / int8 of the same runtime; hybgen/ORT = hybgen int8 time / ONNX Runtime int8 time")
    flags = {s.get("cxx_flags") for e in result["models"].values()
             for s in [e.get("runners", {}).get("hybgen_int8", {})] if s.get("cxx_flags")}
    if flags:
        log(f"   hybgen int8 built with {'; '.join(sorted(flags))} (this machine's target)")
    log(f"{'model':<22}{'hybgen f32':>12}{'hybgen int8':>12}{'ORT f32':>12}{'ORT int8':>12}"
        f"{'hybgen x':>10}{'ORT x':>8}{'hybgen/ORT':>12}{'err hybgen':>12}{'err ORT':>10}")
    rows = {}
    for name, entry in result["models"].items():
        r = entry.get("runners", {})
        med = {k: r.get(k, {}).get("median_us") for k in ("hybgen_generated", "hybgen_int8", "onnxruntime",
                                                          "onnxruntime_int8")}

        def ratio(a, b):
            return med[a] / med[b] if med.get(a) and med.get(b) else None

        def err(k):
            e = [v for v in (r.get(k, {}).get("max_rel_err") or {}).values() if v is not None]
            return max(e) if e else None

        row = {"hybgen_f32_us": med["hybgen_generated"], "hybgen_int8_us": med["hybgen_int8"],
               "ort_f32_us": med["onnxruntime"], "ort_int8_us": med["onnxruntime_int8"],
               "hybgen_speedup": ratio("hybgen_generated", "hybgen_int8"),
               "ort_speedup": ratio("onnxruntime", "onnxruntime_int8"),
               "hybgen_int8_over_ort_int8": ratio("hybgen_int8", "onnxruntime_int8"),
               "hybgen_int8_err": err("hybgen_int8"), "ort_int8_err": err("onnxruntime_int8")}
        rows[name] = row

        def x(v):
            return f"{v:.2f}" if v is not None else "-"

        def e(v):
            return f"{v:.1e}" if v is not None else "-"

        log(f"{name:<22}{fmt_us(med['hybgen_generated']):>12}{fmt_us(med['hybgen_int8']):>12}"
            f"{fmt_us(med['onnxruntime']):>12}{fmt_us(med['onnxruntime_int8']):>12}{x(row['hybgen_speedup']):>10}"
            f"{x(row['ort_speedup']):>8}{x(row['hybgen_int8_over_ort_int8']):>12}{e(row['hybgen_int8_err']):>12}"
            f"{e(row['ort_int8_err']):>10}")
    result["int8_table"] = rows


def main(argv=None) -> int:
    global _CORETYPE
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--models", default=None,
                    help="comma-separated: seed_mlp_bN, a zoo model (export_zoo --list), ZOO_bN for batch N, or "
                         "a file MODEL.onnx (default: " + DEFAULT_MODELS + "; none when --onnx is given)")
    ap.add_argument("--onnx", action="append", default=[], metavar="[NAME=]MODEL.onnx",
                    help="time this ONNX file as it is: hybgen on the code generated from it, the peers on the file "
                         "(repeatable; NAME defaults to the file's stem)")
    ap.add_argument("--shape", action="append", default=[], metavar="INPUT=D1,D2,...",
                    help="shape of an ONNX file's input whose dims are symbolic, for hybgen and the peers (repeatable)")
    ap.add_argument("--rounds", type=int, default=5, help="fresh processes per runner, alternating (default 5)")
    ap.add_argument("--runs", type=int, default=30, help="timed calls per process (default 30)")
    ap.add_argument("--warmup", type=int, default=10, help="untimed calls first (default 10)")
    ap.add_argument("--eager-budget-s", type=float, default=20.0,
                    help="cap on the time one process spends timing hybgen eager + hybridized (fewer runs)")
    ap.add_argument("--build", default=str(DEFAULT_BUILD),
                    help="hybgen build folder with hybgen, export_mlp, export_zoo (default build-peers)")
    ap.add_argument("--venv", default=str(DEFAULT_BUILD / "venv"),
                    help="virtualenv for the Python peers, created when missing (default build-peers/venv)")
    ap.add_argument("--runners", default=",".join(["hybgen_generated", "hybgen_in_process"] + PEERS),
                    help="which: hybgen_generated, hybgen_in_process (eager + hybridized), onnxruntime, torch_eager, "
                         "torchscript")
    ap.add_argument("--out", help="JSON results (default build-peers/peers.json)")
    ap.add_argument("--no-torch", action="store_true", help="skip PyTorch (and its multi-GB install)")
    ap.add_argument("--no-install", action="store_true", help="install nothing; use the venv as it is")
    ap.add_argument("--retry-install", action="store_true", help="try the torch install again after a failure")
    ap.add_argument("--cpu", type=int, help="pin every runner process to this CPU (default: no pinning)")
    ap.add_argument("--openblas-coretype", help="OPENBLAS_CORETYPE for every runner (default from the CPU flags)")
    ap.add_argument("--tolerance", type=float, default=1e-4, help="of the ONNX conversion check")
    ap.add_argument("--hybgen-target", help="generate hybgen's code for this target (hybgen bench --target), "
                                            "e.g. x86-64-v3 on an AVX-512 machine (default: this machine's)")
    ap.add_argument("--quantize", choices=["int8"],
                    help="also time each model quantized to int8 by hybgen quantize and by ONNX Runtime's "
                         "quantize_static (QDQ, S8S8), against both float32 (default models " + QUANTIZE_MODELS + ")")
    ap.add_argument("--calibration-samples", type=int, default=16,
                    help="with --quantize: seeded N(0, 1) calibration samples, the same for both (default 16)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per process")
    args = ap.parse_args(argv)
    if args.quantize:
        if args.models is None and not args.onnx:
            args.models = QUANTIZE_MODELS
        if args.onnx:
            sys.exit("bench_peers: --quantize takes hybgen's own models (--models), not --onnx files")
        if args.runners == ap.get_default("runners"):
            args.runners = QUANTIZE_RUNNERS
        args.no_torch = True
    bootstrap(args)  # returns only inside the venv

    build = Path(args.build).resolve()
    work = DEFAULT_BUILD / "peers"  # exported models, ONNX files, inputs and outputs
    work.mkdir(parents=True, exist_ok=True)
    tools = {"hybgen": find_tool(build, "hybgen"),
             "export_mlp": find_tool(build, "examples/mlp/export_mlp", "export_mlp"),
             "export_zoo": find_tool(build, "examples/export_zoo", "export_zoo")}
    if not tools["hybgen"]:
        sys.exit(f"bench_peers: no hybgen in {build}: cmake --build {build} -j2 --target hybgen export_mlp export_zoo")
    _CORETYPE = args.openblas_coretype if args.openblas_coretype is not None else default_coretype()
    runners = [r.strip() for r in args.runners.split(",") if r.strip()]
    skip = available_peers(args)
    skip["onnxruntime_int8"] = skip["onnxruntime"]
    if not tools["export_zoo"] and "hybgen_in_process" in runners:
        runners.remove("hybgen_in_process")
        log("hybgen eager/hybridized skipped: export_zoo is not built")
    result = {"command": [sys.argv[0], *sys.argv[1:]], "machine": machine_info(), "versions": versions(tools["hybgen"]),
              "environment": {k: runner_env()[k] for k in sorted(FIXED_ENV) + ["OPENBLAS_CORETYPE"]},
              "settings": {"rounds": args.rounds, "runs": args.runs, "warmup": args.warmup, "cpu_pinning": args.cpu,
                           "hybgen_target": args.hybgen_target or "this machine's",
                           "build": str(build), "timer": "steady_clock (C++) / perf_counter_ns (Python), per call"},
              "skipped_peers": {k: v for k, v in skip.items() if v}, "models": {}}

    mi, v = result["machine"], result["versions"]
    log("== machine")
    log(f"cpu: {mi.get('cpu')} ({mi.get('cpus_online')} CPUs online, {mi.get('Hypervisor vendor', 'bare metal?')}); "
        f"family {mi.get('CPU family', '?')}, model {mi.get('Model', '?')}; VNNI: {'yes' if mi.get('vnni') else 'no'}; "
        f"flags: {' '.join(mi.get('flags_of_note', []))}")
    log(f"caches: L1d {mi.get('L1d cache', '?')}, L2 {mi.get('L2 cache', '?')}, L3 {mi.get('L3 cache', '?')}; "
        f"governor {mi.get('governor', 'n/a')}; THP {mi.get('transparent_hugepage', 'n/a')}; {mi['platform']}")
    log(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
        + ("  (other work is running: expect noise)" if os.getloadavg()[0] > 0.5 else ""))
    log("== versions")
    for k in ["hybgen", "compiler", "openblas", "numpy", "onnx", "onnxruntime", "torch", "onnx2torch"]:
        log(f"{k}: {v.get(k) or 'not installed'}")
    log("== environment of every runner")
    log(" ".join(f"{k}={val!r}" if val == "" else f"{k}={val}" for k, val in result["environment"].items()))
    log(f"{args.rounds} rounds x fresh process per runner (order rotating), {args.runs} timed calls after "
        f"{args.warmup} warm-up per process; CPU pinning: {args.cpu if args.cpu is not None else 'none'}")
    for peer, why in skip.items():
        if why and peer in runners:
            log(f"skipped {peer}: {why}")
    log()

    out_path = Path(args.out) if args.out else DEFAULT_BUILD / "peers.json"
    for name, onnx_file in model_list(args):
        log(f"== {name}" + (f" ({onnx_file})" if onnx_file else ""))
        entry = {"load_at_start": os.getloadavg()[0]}
        result["models"][name] = entry
        try:
            if onnx_file:
                entry["onnx_file"] = str(Path(onnx_file).resolve())
                ctx = prepare_onnx_model(name, onnx_file, args, tools, work)
            else:
                ctx = prepare_model(name, args, tools, work)
                if args.quantize:
                    prepare_int8(ctx, args, work)
                    entry["int8"] = ctx["int8_summary"]
        except RunFailed as e:
            log(f"  {'reading the ONNX file' if onnx_file else 'export'} failed: {e}")
            entry["error"] = str(e)
            continue
        ctx["runs"] = args.runs
        entry["inputs"] = ctx["inputs"]
        entry["check"] = ctx["check"]
        if ctx["check"]:
            errs = ", ".join(f"{k} {e:.2g}" for k, e in ctx["check"].get("max_rel_err", {}).items())
            what = "ONNX Runtime on the file" if onnx_file else "ONNX conversion"
            log(f"  {what} vs hybgen generated code: {'OK' if ctx['check']['ok'] else 'FAIL'} "
                f"(max rel err {errs or '?'}, tolerance {args.tolerance:g})")
        model_runners = []
        for r in runners:
            if r == "hybgen_in_process" and onnx_file:
                log("  hybgen eager/hybridized skipped: they run Gluon-style models, not ONNX files")
                continue
            if r in PEERS + ["onnxruntime_int8"] and (skip.get(r) or ctx["peer_skip"]):
                entry.setdefault("skipped", {})[r] = skip.get(r) or ctx["peer_skip"]
                continue
            if r == "onnxruntime_int8" and not ctx.get("int8_onnx"):
                entry.setdefault("skipped", {})[r] = ctx.get("int8_onnx_skip", "no int8 ONNX model")
                continue
            if r == "hybgen_int8" and not ctx.get("int8_json"):
                continue
            model_runners.append(r)
        if ctx["peer_skip"]:
            log(f"  peers skipped: {ctx['peer_skip']}")
        # The eager runtime can be slow on big models: fewer calls, within --eager-budget-s.
        ctx["eager_runs"] = max(3, min(args.runs, int(args.eager_budget_s / max(ctx["export_s"], 1e-3))))
        samples: dict[str, list[dict]] = {}
        failures: dict[str, str] = {}
        for rnd in range(args.rounds):
            k = rnd % max(1, len(model_runners))
            for r in model_runners[k:] + model_runners[:k]:
                if r in failures:
                    continue
                try:
                    res = time_runner(r, ctx, args)
                except RunFailed as e:
                    failures[r] = str(e)
                    log(f"  {r} failed: {e}")
                    continue
                for rn, rep in res.items():
                    samples.setdefault(rn, []).append(rep)
                if r == "hybgen_in_process":
                    per_call = (res["hybgen_eager"]["median_us"] + res["hybgen_hybridized"]["median_us"]) / 1e6
                    ctx["eager_runs"] = max(3, min(args.runs, int(args.eager_budget_s / max(per_call, 1e-9))))
            log(f"  round {rnd + 1}/{args.rounds}: "
                + ", ".join(f"{rn} {fmt_us(s[-1]['median_us'])}" for rn, s in samples.items() if len(s) == rnd + 1))
        entry["runners"] = {rn: summarize(s) for rn, s in samples.items()}
        if failures:
            entry["failed"] = failures
        gen = entry["runners"].get("hybgen_generated", {}).get("median_us")
        peers = {p: entry["runners"][p]["median_us"] for p in PEERS if p in entry["runners"]}
        if gen and peers:
            fastest = min(peers, key=peers.get)
            entry["fastest_peer"] = fastest
            entry["generated_over_fastest_peer"] = gen / peers[fastest]
        entry["load_at_end"] = os.getloadavg()[0]
        out_path.write_text(json.dumps(result, indent=2) + "\n")

    # ---- the table
    log()
    log("== medians over rounds of each process's median latency (us); x gen = runner / hybgen_generated;")
    log("   err = largest output difference from ONNX Runtime's output on the same input, relative to its largest value")
    log("   (hybgen eager/hybridized: the interpreter `hybgen verify` also compares the generated code with)")
    order = ["hybgen_generated", "hybgen_int8", "hybgen_hybridized", "hybgen_eager"] + PEERS + ["onnxruntime_int8"]
    log(f"{'model':<22}{'runner':<19}{'median us':>11}{'rounds min..max':>20}{'x gen':>7}{'err':>9}  note")
    for name, entry in result["models"].items():
        runners_ = entry.get("runners", {})
        gen = runners_.get("hybgen_generated", {}).get("median_us")
        for r in order:
            s = runners_.get(r)
            if s is None:
                why = entry.get("skipped", {}).get(r) or entry.get("failed", {}).get(r)
                if why and (r in runners or r in PEERS):
                    log(f"{name:<22}{r:<19}{'-':>11}{'':>20}{'':>7}{'':>9}  skipped: {why.splitlines()[0][:70]}")
                continue
            notes = []
            if r == "hybgen_generated":
                errs = (entry.get("check") or {}).get("max_rel_err") or {}
                if entry.get("check") and not entry["check"].get("ok"):
                    notes.append("ONNX CHECK FAILED")
                if s.get("compile_s") is not None:
                    notes.append(f"compiled in {s['compile_s']:.1f} s")
            elif r == "onnxruntime":
                errs = {}
                if s.get("call_floor_us") is not None:
                    notes.append(f"a call on an Identity graph: {s['call_floor_us']:.1f} us")
            else:
                errs = s.get("max_rel_err") or {}
            if r in ("hybgen_eager", "hybgen_hybridized"):
                err_text = "-"
            elif r == "onnxruntime":
                err_text = "ref"
            else:
                known = [e for e in errs.values() if e is not None]
                err_text = f"{max(known):.1e}" if known and len(known) == len(errs) else "?"
                bad = [k for k, e in errs.items() if e is None or e > (args.tolerance if r == "hybgen_generated"
                                                                        else PEER_TOLERANCE)]
                if bad and r not in INT8_RUNNERS:  # int8 differs from float by its quantization error
                    notes.append("OUTPUT DIFFERS: " + ", ".join(bad))
            spread = f"{fmt_us(min(s['round_medians_us']))}..{fmt_us(max(s['round_medians_us']))}"
            ratio = f"{s['median_us'] / gen:.2f}" if gen else "-"
            note = "; ".join(n for n in notes if n)
            log(f"{name:<22}{r:<19}{fmt_us(s['median_us']):>11}{spread:>20}{ratio:>7}{err_text:>9}  {note}")
        if entry.get("fastest_peer"):
            log(f"{name:<22}{'hybgen_generated / fastest peer (' + entry['fastest_peer'] + ')':<50}"
                f"{entry['generated_over_fastest_peer']:>7.2f}")
        if entry.get("error"):
            log(f"{name:<22}error: {entry['error'].splitlines()[0]}")
    if args.quantize:
        int8_table(result)
    log(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    out_path.write_text(json.dumps(result, indent=2) + "\n")
    log(f"wrote {out_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
