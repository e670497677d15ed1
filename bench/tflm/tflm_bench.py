#!/usr/bin/env python3
"""hybgen beside TensorFlow Lite Micro + CMSIS-NN on the emulated Cortex-M boards.

    python3 bench/tflm/tflm_bench.py --tflite-micro DIR --cmsis-nn DIR --flatbuffers DIR --gemmlowp DIR --ruy DIR
        [--hybgen build/hybgen] [--models person_detect,...] [--targets cortex-m4,cortex-m7,cortex-m55]
        [--build /tmp/hybgen-tflm-bench] [--out table.md] [--jobs 2] [--hybgen-arg=--small-arena]
        [--profile MODEL:TARGET ...] [--top 25]

For each board (hybgen's cortex-m4, cortex-m7 and cortex-m55 targets) it
  1. compiles TensorFlow Lite Micro's interpreter and the kernels the models
     use, with CMSIS-NN's (TFLM's kernels/cmsis_nn/ variants, -DCMSIS_NN, and
     CMSIS-NN's sources), into BUILD/TARGET/libtflm.a, with hybgen's compiler
     and flags for that board and TFLM's own optimization levels (-Os for the
     interpreter, -O2 for the kernels and CMSIS-NN, as its Makefile has them)
     and its "release" build type (-DNDEBUG -DTF_LITE_STRIP_ERROR_STRINGS);
     objects are kept and rebuilt only when their source or the flags change;
  2. links, per model, runner_main.cpp and tflm_model.cpp with the .tflite file
     embedded and only its operators registered, on the start-up code and
     linker script `hybgen board` writes (those `hybgen verify` uses), runs it
     under qemu-system-arm with -icount like `hybgen verify`, and checks its
     int8 outputs against tests/data/tflite/NAME-tflm-output.npy (TFLite
     Micro's Python interpreter) on every sample, exactly;
  3. runs `hybgen inspect MODEL --target T --json` for the same model and
     board (code, weights, arena, peak stack, instructions per inference,
     after checking the board's outputs against hybgen's reference).
It writes a markdown table (to --out, and prints it) and a JSON file of
everything measured beside it (OUT with .json).

What is counted:
  instructions  one inference (one Invoke() for TFLM, the first after
                AllocateTensors(); one NAME_run() call for hybgen), from SysTick
                under qemu -icount; neither includes setting up the input.
                Both take and give the models' int8 tensors: hybgen's code is
                generated with --io-precision quantized (--float-edges: its
                default float32 run(), whose count then includes quantizing
                the input and dequantizing the output).
  flash         hybgen: its code (text + data of the model's objects) + its
                weights. TFLM: text + rodata + data of TFLM's and CMSIS-NN's
                objects and of tflm_model.cpp (resolver and interpreter set-up)
                as linked (after --gc-sections), plus the .tflite file itself.
                Neither counts the C library, libgcc or the driver.
  RAM           hybgen: its arena + peak stack + the caller's input and output
                arrays (TFLM's arena holds its input and output tensors).
                TFLM: arena_used_bytes() after
                AllocateTensors() + .data and .bss of TFLM's objects (the
                interpreter and resolver objects among them; not the arena
                array) + the peak stack of Invoke().

--profile MODEL:TARGET also runs both programs once more under
`qemu-system-arm -singlestep -d exec,nochain` (one line per instruction
executed, read through a pipe) and adds up one inference's instructions by the
function they belong to, as bench/arm_instructions.py does for AArch64; for
hybgen also by source function, inlined ones apart, on its kept verify build
rebuilt with -g (the same code, checked). Both lists are written after the table.
"""
import argparse
import bisect
import collections
import concurrent.futures
import glob
import hashlib
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MODELS_DIR = os.path.join(REPO, "tests", "data", "tflite")
DEFAULT_MODELS = ["person_detect", "vww_96_int8", "kws_ref_model", "pretrainedResnet_quant", "ad01_int8",
                  "micro_speech_quantized", "hello_world_int8"]

# hybgen's flags for each board: gen/targets/target.cpp (compiler_flags, board)
# and gen/targets/toolchain.cpp (the bare-metal link and the emulator's flags).
TARGETS = {
    "cortex-m4": ("mps2-an386", "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16"),
    "cortex-m7": ("mps2-an500", "-mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-sp-d16"),
    "cortex-m55": ("mps3-an547", "-mcpu=cortex-m55 -mthumb -mfloat-abi=hard"),
}
# Both drivers' noinline stack measurement, called right after the model returns.
STACK_USED_BELOW = "_ZN12_GLOBAL__N_116stack_used_belowEPKm"
LINK_FLAGS = ("-ffunction-sections -fdata-sections --specs=nano.specs --specs=rdimon.specs -nostartfiles "
              "-Wl,--gc-sections").split()
QEMU = "qemu-system-arm -nographic -monitor none -serial none -icount shift=0,sleep=off".split()

# TFLM's tools/make/Makefile (COMMON_FLAGS, CXXFLAGS, CCFLAGS, BUILD_TYPE=release,
# OPTIMIZED_KERNEL_DIR=cmsis_nn, OPTIMIZE_KERNELS_FOR), its
# targets/cortex_m_generic_makefile.inc (PLATFORM_FLAGS) and
# ext_libs/cmsis_nn.inc (no float CMSIS-NN kernels).
TFLM_COMMON = ("-fno-unwind-tables -fno-asynchronous-unwind-tables -ffunction-sections -fdata-sections "
               "-fmessage-length=0 -DTF_LITE_STATIC_MEMORY -DTF_LITE_DISABLE_X86_NEON -DCMSIS_NN "
               "-DKERNELS_OPTIMIZED_FOR_SPEED -DNDEBUG -DTF_LITE_STRIP_ERROR_STRINGS -DTF_LITE_MCU_DEBUG_LOG "
               "-mlittle-endian -fomit-frame-pointer -funsigned-char -DARM_NN_ENABLE_F16=0 "
               "-DARM_NN_ENABLE_F32=0 -w").split()
TFLM_CXX = "-std=c++17 -fno-rtti -fno-exceptions -fno-threadsafe-statics".split()
TFLM_C = ["-std=c17"]
CORE_OPT, KERNEL_OPT, CMSIS_NN_OPT = "-Os", "-O2", "-O2"
ARENA_BYTES = 400 * 1024  # fits the M55's 512 KiB DTCM beside the stack and heap

# TFLite builtin operator codes (schema.fbs, enum BuiltinOperator) -> the
# MicroMutableOpResolver method, its registration (int8-only where TFLM has
# one, as its person_detection example registers them) and the kernel files
# (tensorflow/lite/micro/kernels/, replaced by kernels/cmsis_nn/ where it has one).
OPERATORS = {
    0: ("ADD", "AddAdd", "tflite::Register_ADD_INT8()", ["add", "add_common"]),
    1: ("AVERAGE_POOL_2D", "AddAveragePool2D", "tflite::Register_AVERAGE_POOL_2D_INT8()",
        ["pooling", "pooling_common"]),
    2: ("CONCATENATION", "AddConcatenation", "", ["concatenation"]),
    3: ("CONV_2D", "AddConv2D", "tflite::Register_CONV_2D_INT8()", ["conv", "conv_common"]),
    4: ("DEPTHWISE_CONV_2D", "AddDepthwiseConv2D", "tflite::Register_DEPTHWISE_CONV_2D_INT8()",
        ["depthwise_conv", "depthwise_conv_common"]),
    6: ("DEQUANTIZE", "AddDequantize", "", ["dequantize", "dequantize_common"]),
    9: ("FULLY_CONNECTED", "AddFullyConnected", "tflite::Register_FULLY_CONNECTED_INT8()",
        ["fully_connected", "fully_connected_common"]),
    14: ("LOGISTIC", "AddLogistic", "", ["logistic", "logistic_common"]),
    17: ("MAX_POOL_2D", "AddMaxPool2D", "tflite::Register_MAX_POOL_2D_INT8()", ["pooling", "pooling_common"]),
    18: ("MUL", "AddMul", "tflite::Register_MUL_INT8()", ["mul", "mul_common"]),
    22: ("RESHAPE", "AddReshape", "", ["reshape", "reshape_common"]),
    25: ("SOFTMAX", "AddSoftmax", "tflite::Register_SOFTMAX_INT8()", ["softmax", "softmax_common"]),
    34: ("PAD", "AddPad", "tflite::Register_PAD_INT8()", ["pad", "pad_common"]),
    40: ("MEAN", "AddMean", "", ["reduce", "reduce_common"]),
    45: ("STRIDED_SLICE", "AddStridedSlice", "", ["strided_slice", "strided_slice_common"]),
    114: ("QUANTIZE", "AddQuantize", "", ["quantize", "quantize_common"]),
}
# Kernel files every model needs (helpers the operators share).
KERNEL_HELPERS = ["kernel_util", "micro_tensor_utils"]


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# The .tflite file: just enough of FlatBuffers to list its operators.

def builtin_codes(path):
    """The builtin operator codes a .tflite file's operator_codes name."""
    data = open(path, "rb").read()

    def u32(at):
        return struct.unpack_from("<I", data, at)[0]

    def field(table, index):  # the absolute position of a table's field, or None
        vtable = table - struct.unpack_from("<i", data, table)[0]
        vt_bytes = struct.unpack_from("<H", data, vtable)[0]
        slot = 4 + 2 * index
        if slot >= vt_bytes:
            return None
        offset = struct.unpack_from("<H", data, vtable + slot)[0]
        return table + offset if offset else None

    if data[4:8] != b"TFL3":
        raise SystemExit(path + ": not a TFLite file")
    model = u32(0)
    at = field(model, 1)  # Model.operator_codes
    vector = at + u32(at)
    codes = []
    for i in range(u32(vector)):
        element = vector + 4 + 4 * i
        code_table = element + u32(element)
        deprecated = field(code_table, 0)  # OperatorCode.deprecated_builtin_code: byte
        extended = field(code_table, 3)  # OperatorCode.builtin_code: int32
        code = max(struct.unpack_from("<b", data, deprecated)[0] if deprecated else 0,
                   struct.unpack_from("<i", data, extended)[0] if extended else 0)
        if code == 32:
            raise SystemExit(path + ": custom operators are not handled here")
        codes.append(code)
    return codes


def read_npy(path):
    """(shape, list of floats) of a little-endian float32 .npy file."""
    data = open(path, "rb").read()
    if data[:6] != b"\x93NUMPY":
        raise SystemExit(path + ": not a .npy file")
    header_len = struct.unpack_from("<H", data, 8)[0] if data[6] == 1 else struct.unpack_from("<I", data, 8)[0]
    start = 10 if data[6] == 1 else 12
    header = data[start:start + header_len].decode("latin1")
    if "'<f4'" not in header or "'fortran_order': False" not in header:
        raise SystemExit(path + ": expected a C-order float32 array")
    shape = tuple(int(d) for d in re.search(r"'shape': \(([^)]*)\)", header).group(1).split(",") if d.strip())
    count = 1
    for d in shape:
        count *= d
    return shape, struct.unpack_from("<%df" % count, data, start + header_len)


# ---------------------------------------------------------------------------
# Building TFLM.

def source_lists(src, codes):
    """(core C++ sources, kernel C++ sources, CMSIS-NN C sources), each a list of paths."""
    micro = os.path.join(src.tflite_micro, "tensorflow", "lite", "micro")
    test_support = {"fake_micro_context.cc", "mock_micro_graph.cc", "test_helper_custom_ops.cc", "test_helpers.cc"}
    core = []
    for sub in ["", "arena_allocator", "memory_planner", "tflite_bridge"]:
        folder = os.path.join(micro, sub)
        core += [os.path.join(folder, f) for f in sorted(os.listdir(folder))
                 if f.endswith(".cc") and not f.endswith("_test.cc") and f not in test_support]
    # TFLite sources TFLM shares (sources.inc: TFL_CC_SRCS, without array.cc).
    tensorflow = os.path.join(src.tflite_micro, "tensorflow")
    for root, dirs, files in os.walk(tensorflow):
        rel = os.path.relpath(root, tensorflow)
        if rel in ("lite/micro", "lite/experimental"):
            dirs[:] = []
            continue
        dirs.sort()
        core += [os.path.join(root, f) for f in sorted(files)
                 if (f.endswith(".cc") or f.endswith(".c")) and not (rel == "lite" and f == "array.cc")]
    names = list(KERNEL_HELPERS)
    for code in sorted(set(codes)):
        for name in OPERATORS[code][3]:
            if name not in names:
                names.append(name)
    kernels = []
    for name in names:
        optimized = os.path.join(micro, "kernels", "cmsis_nn", name + ".cc")
        kernels.append(optimized if os.path.exists(optimized) else os.path.join(micro, "kernels", name + ".cc"))
    cmsis_nn = []
    for root, dirs, files in os.walk(os.path.join(src.cmsis_nn, "Source")):
        dirs.sort()
        cmsis_nn += [os.path.join(root, f) for f in sorted(files) if f.endswith(".c") and not f.endswith("_f16.c")
                     and not f.endswith("_f32.c") and f != "arm_nntables_flt.c"]
    return core, kernels, cmsis_nn


def includes(src):
    return ["-I" + src.tflite_micro, "-I" + os.path.join(src.flatbuffers, "include"), "-I" + src.gemmlowp,
            "-I" + src.ruy, "-I" + src.cmsis_nn, "-I" + os.path.join(src.cmsis_nn, "Include")]


def run(command, **kw):
    out = subprocess.run(command, capture_output=True, text=True, **kw)
    if out.returncode != 0:
        raise SystemExit("failed: " + " ".join(command) + "\n" + out.stdout + out.stderr)
    return out


def build_library(src, target, sources, build, jobs):
    """Compiles what changed into BUILD/TARGET/obj and archives BUILD/TARGET/libtflm.a."""
    flags = TARGETS[target][1].split()
    core, kernels, cmsis_nn = sources
    commands = []
    for group, files in (("core", core), ("kernels", kernels), ("cmsis_nn", cmsis_nn)):
        for path in files:
            is_c = path.endswith(".c")
            opt = CORE_OPT if group == "core" else KERNEL_OPT if group == "kernels" else CMSIS_NN_OPT
            compiler = "arm-none-eabi-gcc" if is_c else "arm-none-eabi-g++"
            args = [compiler] + flags + TFLM_COMMON + (TFLM_C if is_c else TFLM_CXX) + [opt] + includes(src)
            rel = os.path.relpath(path, src.cmsis_nn if group == "cmsis_nn" else src.tflite_micro)
            obj = os.path.join(build, target, "obj", group, os.path.splitext(rel)[0] + ".o")
            commands.append((args, path, obj))
    stale = []
    for args, path, obj in commands:
        stamp = obj + ".flags"
        key = hashlib.sha1(" ".join(args).encode()).hexdigest()
        fresh = (os.path.exists(obj) and os.path.exists(stamp) and open(stamp).read() == key
                 and os.path.getmtime(obj) >= os.path.getmtime(path))
        if not fresh:
            stale.append((args, path, obj, stamp, key))
    library = os.path.join(build, target, "libtflm.a")
    if stale:
        log("%s: compiling %d of %d TFLM/CMSIS-NN sources" % (target, len(stale), len(commands)))
        started = time.time()

        def compile_one(item):
            args, path, obj, stamp, key = item
            os.makedirs(os.path.dirname(obj), exist_ok=True)
            run(["nice", "-n", "10"] + args + ["-c", path, "-o", obj])
            with open(stamp, "w") as f:
                f.write(key)

        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            list(pool.map(compile_one, stale))
        log("%s: compiled in %.0f s" % (target, time.time() - started))
    if stale or not os.path.exists(library):
        if os.path.exists(library):
            os.remove(library)
        run(["arm-none-eabi-ar", "rcs", library] + [obj for _, _, obj in commands])
    return library


def board_files(hybgen, target, build):
    """startup.o and link.ld of hybgen's board for TARGET, and the driver's object."""
    folder = os.path.join(build, target, "board")
    run([hybgen, "board", "--target", target, "-o", folder])
    flags = TARGETS[target][1].split()
    startup = os.path.join(folder, "startup.o")
    run(["arm-none-eabi-gcc"] + flags + ["-std=c99", "-O2", "-ffunction-sections", "-fdata-sections", "-c",
                                          os.path.join(folder, "startup.c"), "-o", startup])
    driver = os.path.join(folder, "runner_main.o")
    run(["arm-none-eabi-g++"] + flags + ["-std=c++17", "-O2", "-fno-exceptions", "-fno-rtti", "-ffunction-sections",
                                          "-fdata-sections", "-I" + REPO, "-c",
                                          os.path.join(HERE, "runner_main.cpp"), "-o", driver])
    return startup, os.path.join(folder, "link.ld"), driver


# ---------------------------------------------------------------------------
# One model under TFLM.

def build_program(src, target, model, codes, library, board, folder):
    os.makedirs(folder, exist_ok=True)
    flags = TARGETS[target][1].split()
    with open(os.path.join(folder, "tflm_ops.inc"), "w") as f:
        for code in sorted(set(codes)):
            if code not in OPERATORS:
                raise SystemExit("%s: builtin operator %d is not in tflm_bench.py's OPERATORS" % (model, code))
            _, method, registration, _ = OPERATORS[code]
            f.write("TFLM_OP(%s%s)\n" % (method, ", " + registration if registration else ""))
    path = os.path.join(MODELS_DIR, model + ".tflite")
    with open(os.path.join(folder, "model_data.S"), "w") as f:
        f.write('  .section .rodata.tflm_model,"a",%%progbits\n  .balign 16\n  .global g_tflm_model\n'
                'g_tflm_model:\n  .incbin "%s"\n' % path)
    model_obj = os.path.join(folder, "tflm_model.o")
    run(["arm-none-eabi-g++"] + flags + TFLM_COMMON + TFLM_CXX + [KERNEL_OPT] + includes(src) +
        ["-I" + REPO, "-I" + folder, "-DTFLM_ARENA_BYTES=%d" % ARENA_BYTES, "-c",
         os.path.join(HERE, "tflm_model.cpp"), "-o", model_obj])
    data_obj = os.path.join(folder, "model_data.o")
    run(["arm-none-eabi-gcc"] + flags + ["-c", os.path.join(folder, "model_data.S"), "-o", data_obj])
    startup, link_ld, driver = board
    program = os.path.join(folder, "program.elf")
    run(["arm-none-eabi-g++"] + flags + LINK_FLAGS + ["-T", link_ld, "-Wl,-Map=" + os.path.join(folder, "program.map"),
                                                       startup, driver, model_obj, data_obj, library, "-lm", "-o",
                                                       program])
    return program


def qemu_command(target, program, folder, extra=()):
    return QEMU + ["-machine", TARGETS[target][0], *extra, "-semihosting-config",
                   "enable=on,target=native,arg=program,arg=" + folder.replace(",", ",,"), "-kernel", program]


def run_program(target, program, folder, inputs):
    shape, values = inputs
    with open(os.path.join(folder, "in.bin"), "wb") as f:
        f.write(struct.pack("<%df" % len(values), *values))
    out = subprocess.run(qemu_command(target, program, folder), capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        raise SystemExit("%s on %s failed (exit %d):\n%s%s" % (program, target, out.returncode, out.stdout, out.stderr))
    line = re.search(r"tflm-firmware (.*)", out.stdout)
    if not line:
        raise SystemExit("%s printed no measurements:\n%s%s" % (program, out.stdout, out.stderr))
    result = {}
    for item in line.group(1).split():
        key, value = item.split("=")
        result[key] = int(value, 16) if key.endswith("_bits") else int(value)
    result["output_scale"] = struct.unpack("<f", struct.pack("<I", result.pop("output_scale_bits")))[0]
    return result


def check_outputs(model, folder, result):
    """TFLM's int8 outputs against the committed TFLite Micro outputs, exactly, on every sample."""
    _, expected = read_npy(os.path.join(MODELS_DIR, model + "-tflm-output.npy"))
    raw = open(os.path.join(folder, "out.bin"), "rb").read()
    kind = {9: "b", 3: "B"}.get(result["output_type"])
    if kind is None:
        raise SystemExit("%s: output type %d not checked here" % (model, result["output_type"]))
    got = struct.unpack("<%d%s" % (len(raw), kind), raw)
    scale, zero = result["output_scale"], result["output_zero_point"]
    want = [int(round(v / scale)) + zero for v in expected]
    if len(got) != len(want):
        raise SystemExit("%s: TFLM wrote %d outputs, %d expected" % (model, len(got), len(want)))
    bad = [i for i, (a, b) in enumerate(zip(got, want)) if a != b]
    if bad:
        raise SystemExit("%s: TFLM's output differs from %s-tflm-output.npy at %d of %d elements (first: %d, %d "
                         "against %d)" % (model, model, len(bad), len(got), bad[0], got[bad[0]], want[bad[0]]))
    return len(got)


def map_sizes(map_path, library):
    """Bytes of text, rodata, data and bss in the linked program by where they come from:
    'tflm' (libtflm.a and tflm_model.o), 'model' (the embedded .tflite), 'arena' (the arena
    array), 'driver' (runner_main.o, startup.o) and 'other' (the C library, libgcc)."""
    sizes = collections.defaultdict(lambda: collections.Counter())
    text = open(map_path).read()
    text = text[text.index("Linker script and memory map"):]
    pending = None
    for line in text.splitlines():
        m = re.match(r"^ (\.[\w.$]+|COMMON)\s*$", line)
        if m:
            pending = m.group(1)
            continue
        m = re.match(r"^ (\.[\w.$]+|COMMON)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", line)
        if not m:
            pending = None
            continue
        name = m.group(1) or pending
        pending = None
        if not name:
            continue
        size, origin = int(m.group(3), 16), m.group(4)
        if size == 0:
            continue
        kind = ("text" if name.startswith((".text", ".vectors", ".ARM", ".init", ".fini", ".glue", ".vfp11", ".v4_bx",
                                            ".iplt"))
                else "rodata" if name.startswith(".rodata") else "data" if name.startswith((".data", ".init_array",
                                                                                            ".fini_array"))
                else "bss" if name.startswith((".bss", "COMMON")) else None)
        if kind is None:
            continue
        if name == ".bss.tflm_arena":
            owner = "arena"
        elif name == ".rodata.tflm_model":
            owner = "model"
        elif origin.startswith(library) or origin.endswith("tflm_model.o"):
            owner = "tflm"
        elif origin.endswith(("runner_main.o", "startup.o")):
            owner = "driver"
        else:
            owner = "other"
        sizes[owner][kind] += size
    return {owner: dict(counter) for owner, counter in sizes.items()}


# ---------------------------------------------------------------------------
# Instructions per function (qemu's execution log).

def functions_of(program):
    """Sorted (start, end, symbol) of the program's functions, from its symbol table."""
    out = run(["arm-none-eabi-nm", "-S", "--defined-only", program]).stdout
    functions = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            start = int(parts[0], 16) & ~1
            functions.append((start, start + int(parts[1], 16), parts[3]))
    functions.sort()
    return functions


def demangle(names):
    out = subprocess.run(["arm-none-eabi-c++filt"], input="\n".join(names), capture_output=True, text=True)
    lines = out.stdout.splitlines()
    return lines if out.returncode == 0 and len(lines) == len(names) else names


def trace(command, program, cwd, begin, end):
    """Instructions executed at each address in one run of `command` (a qemu-system-arm command line),
    counted from the first time the function `begin` is entered to the first time `end` is: the
    drivers call the model (tflm_invoke, NAME_run) first after painting the stack and measure
    the stack (stack_used_below) right after it returns, so this is one inference."""
    by_name = {f[2]: f[0] for f in functions_of(program)}
    begin_pc, end_pc = by_name[begin], by_name[end]
    per_address = collections.Counter()
    # -singlestep: one instruction per translated block, so each "Trace" line
    # of the execution log is one instruction executed. (Counting whole
    # blocks by their first address miscounts where qemu translates the same
    # address twice: the shorter blocks -icount cuts, Helium's loop states.)
    # qemu writes its log into a pipe read here as it runs: the log of tens of
    # millions of instructions would take gigabytes.
    with tempfile.TemporaryDirectory() as tmp:
        log_path = os.path.join(tmp, "qemu.log")
        os.mkfifo(log_path)
        command = command[:1] + ["-singlestep", "-d", "exec,nochain", "-D", log_path] + command[1:]
        emulator = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        counting, finished = False, False
        with open(log_path) as f:
            for line in f:
                if not line.startswith("Trace"):
                    continue
                pc = int(line.split("/", 2)[1], 16)  # Trace N: HOST [CS_BASE/PC/FLAGS/CFLAGS] SYMBOL
                if not counting:
                    counting = pc == begin_pc
                elif pc == end_pc:
                    finished = True
                    break
                if counting:
                    per_address[pc] += 1
        emulator.kill()
        emulator.wait()
    if not finished:
        raise SystemExit("%s: the log never reached %s after %s" % (program, end, begin))
    return per_address


def by_symbol(program, per_address):
    """Instructions per function of the program's symbol table."""
    functions = functions_of(program)
    starts = [f[0] for f in functions]
    counts = collections.Counter()
    for pc, n in per_address.items():
        i = bisect.bisect_right(starts, pc) - 1
        counts[functions[i][2] if i >= 0 and pc < functions[i][1] else "?"] += n
    names = list(counts)
    return collections.Counter(dict(zip(demangle(names), (counts[n] for n in names))))


def by_source_function(program, per_address):
    """Instructions per source function, inlined ones apart (the innermost function
    arm-none-eabi-addr2line names for each address of a program built with -g)."""
    addresses = sorted(per_address)
    out = run(["arm-none-eabi-addr2line", "-e", program, "-f", "-C"] + ["%x" % a for a in addresses]).stdout
    lines = out.splitlines()
    counts = collections.Counter()
    for i, pc in enumerate(addresses):
        counts[lines[2 * i]] += per_address[pc]
    return counts


# ---------------------------------------------------------------------------
# hybgen.

DTYPE_BYTES = {"float32": 4, "int8": 1, "uint8": 1, "int32": 4}


def hybgen_measure(hybgen, model, target, extra):
    out = run([hybgen, "inspect", os.path.join(MODELS_DIR, model + ".tflite"), "--target", target, "--json", *extra])
    report = json.loads(out.stdout)
    memory = report.get("memory")
    if not memory:
        raise SystemExit("hybgen inspect %s --target %s measured nothing on the board" % (model, target))
    # The caller's input and output arrays: TFLM's arena holds its input and
    # output tensors, so hybgen's RAM counts them too.
    memory["edge_bytes"] = sum(math.prod(e["shape"]) * DTYPE_BYTES[e["dtype"]]
                               for e in report["inputs"] + report["outputs"])
    memory["ram_bytes"] += memory["edge_bytes"]
    return memory


def code_of(program):
    """The bytes of a program's .text."""
    run(["arm-none-eabi-objcopy", "-O", "binary", "-j", ".text", program, program + ".text"])
    with open(program + ".text", "rb") as f:
        return f.read()


def hybgen_profile(hybgen, model, target, extra, compiler_flags):
    """Instructions per function and per source function (inlined ones apart) of one call of
    hybgen's code for MODEL on TARGET: its verify build, kept, rebuilt with -g (the same code:
    checked), run once more."""
    out = run([hybgen, "verify", os.path.join(MODELS_DIR, model + ".tflite"), "--target", target, "--keep", *extra])
    folder = re.search(r"build kept in (\S+)", out.stdout).group(1)
    name = os.path.basename(glob.glob(os.path.join(folder, "*.manifest.json"))[0])[:-len(".manifest.json")]
    # gen/targets/toolchain.cpp's bare-metal flags after the target's (inspect reports those).
    flags = compiler_flags.split() + LINK_FLAGS + ["-g", "-I" + folder]
    debug_object = os.path.join(folder, name + "_g.o")
    run(["arm-none-eabi-g++"] + flags + ["-c", os.path.join(folder, name + ".cpp"), "-o", debug_object])
    program = os.path.join(folder, "program_g")
    run(["arm-none-eabi-g++"] + flags + ["-T", os.path.join(folder, "link.ld"), os.path.join(folder, "startup.o"),
                                        os.path.join(folder, "main.cpp"), debug_object,
                                        os.path.join(folder, name + "_weights.cpp"), "-o", program])
    if code_of(os.path.join(folder, "program")) != code_of(program):
        raise SystemExit("%s: the -g build's code differs from hybgen's; cannot profile it" % folder)
    command = QEMU + ["-machine", TARGETS[target][0], "-semihosting-config",
                      "enable=on,target=native,arg=program,arg=" + folder.replace(",", ",,"), "-kernel", program]
    per_address = trace(command, program, folder, name + "_run", STACK_USED_BELOW)
    return by_symbol(program, per_address), by_source_function(program, per_address), folder


# ---------------------------------------------------------------------------

def tool_version(command):
    return subprocess.run(command, capture_output=True, text=True).stdout.splitlines()[0]


def git_commit(folder):
    """The commit of a source tree: a git checkout's HEAD, or the COMMIT file README.md's export writes."""
    out = subprocess.run(["git", "-C", folder, "rev-parse", "HEAD"], capture_output=True, text=True)
    if out.returncode == 0:
        return out.stdout.strip()
    stamp = os.path.join(folder, "COMMIT")
    return open(stamp).read().strip() if os.path.exists(stamp) else "unknown"


def table(rows):
    lines = ["| model | board | hybgen instructions | TFLM+CMSIS-NN instructions | hybgen / TFLM | "
             "flash hybgen / TFLM (bytes) | RAM hybgen / TFLM (bytes) |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        h, t = r["hybgen"], r["tflm"]
        lines.append("| %s | %s | %d | %d | %.2f | %d / %d | %d / %d |" % (
            r["model"], r["target"], h["instructions"], t["instructions"], h["instructions"] / t["instructions"],
            h["flash_bytes"], t["flash_bytes"], h["ram_bytes"], t["ram_bytes"]))
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tflite-micro", required=True, help="a tree of github.com/tensorflow/tflite-micro")
    parser.add_argument("--cmsis-nn", required=True, help="a tree of github.com/ARM-software/CMSIS-NN")
    parser.add_argument("--flatbuffers", required=True,
                        help="github.com/google/flatbuffers at the tag TFLM's flatbuffers_download.sh names, "
                             "with its flatbuffers.patch applied")
    parser.add_argument("--gemmlowp", required=True, help="a tree of github.com/google/gemmlowp (fixedpoint/)")
    parser.add_argument("--ruy", required=True, help="a tree of github.com/google/ruy (ruy/profiler/instrumentation.h)")
    parser.add_argument("--hybgen", default=os.path.join(REPO, "build", "hybgen"))
    parser.add_argument("--hybgen-arg", action="append", default=[], metavar="ARG",
                        help="one more argument for hybgen's inspect and verify, e.g. --hybgen-arg=--small-arena "
                             "(repeatable)")
    parser.add_argument("--float-edges", action="store_true",
                        help="hybgen's run() on float32 (its default) instead of the int8 tensors TFLM takes")
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS))
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--build", default=os.path.join(tempfile.gettempdir(), "hybgen-tflm-bench"))
    parser.add_argument("--out", default=None, help="markdown table (default BUILD/tflm_bench.md); JSON beside it")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--profile", action="append", default=[], metavar="MODEL:TARGET",
                        help="instructions per function for both tools (repeatable)")
    parser.add_argument("--top", type=int, default=25, help="functions listed per profile")
    src = parser.parse_args()
    started = time.time()
    for flag in ("tflite_micro", "cmsis_nn", "flatbuffers", "gemmlowp", "ruy"):
        setattr(src, flag, os.path.abspath(getattr(src, flag)))
    hybgen = os.path.abspath(src.hybgen)
    if not src.float_edges:
        src.hybgen_arg = ["--io-precision", "quantized"] + src.hybgen_arg
    models = [m for m in src.models.split(",") if m]
    targets = [t for t in src.targets.split(",") if t]
    for t in targets:
        if t not in TARGETS:
            raise SystemExit("unknown target %s (expected one of %s)" % (t, ", ".join(TARGETS)))
    for tool in ("arm-none-eabi-g++", "qemu-system-arm"):
        if not shutil.which(tool):
            raise SystemExit(tool + " is not on the PATH (Debian: gcc-arm-none-eabi libnewlib-arm-none-eabi "
                             "qemu-system-arm)")
    build = os.path.abspath(src.build)
    out_path = os.path.abspath(src.out or os.path.join(build, "tflm_bench.md"))
    codes = {m: builtin_codes(os.path.join(MODELS_DIR, m + ".tflite")) for m in models}
    all_codes = sorted({c for cs in codes.values() for c in cs})
    for c in all_codes:
        if c not in OPERATORS:
            raise SystemExit("builtin operator %d is not in tflm_bench.py's OPERATORS" % c)
    sources = source_lists(src, all_codes)
    rows, profiles = [], {}
    for target in targets:
        library = build_library(src, target, sources, build, src.jobs)
        board = board_files(hybgen, target, build)
        for model in models:
            folder = os.path.join(build, target, "models", model)
            program = build_program(src, target, model, codes[model], library, board, folder)
            inputs = read_npy(os.path.join(MODELS_DIR, model + "-input.npy"))
            tflm = run_program(target, program, folder, inputs)
            tflm["outputs_checked"] = check_outputs(model, folder, tflm)
            sizes = map_sizes(os.path.join(folder, "program.map"), library)
            own, model_bytes = sizes.get("tflm", {}), sizes.get("model", {}).get("rodata", 0)
            tflm["code_bytes"] = own.get("text", 0) + own.get("rodata", 0) + own.get("data", 0)
            tflm["model_bytes"] = model_bytes
            tflm["flash_bytes"] = tflm["code_bytes"] + model_bytes
            tflm["static_ram_bytes"] = own.get("data", 0) + own.get("bss", 0)
            tflm["ram_bytes"] = tflm["arena_used_bytes"] + tflm["static_ram_bytes"] + tflm["stack_bytes"]
            tflm["sizes"] = sizes
            h = hybgen_measure(hybgen, model, target, src.hybgen_arg)
            row = {"model": model, "target": target, "hybgen": h, "tflm": tflm,
                   "operators": [OPERATORS[c][0] for c in sorted(set(codes[model]))]}
            rows.append(row)
            log("%s %s: hybgen %d, TFLM %d instructions (%.2f); flash %d / %d; RAM %d / %d" % (
                model, target, h["instructions"], tflm["instructions"], h["instructions"] / tflm["instructions"],
                h["flash_bytes"], tflm["flash_bytes"], h["ram_bytes"], tflm["ram_bytes"]))
            if "%s:%s" % (model, target) in src.profile:
                tflm_functions = by_symbol(program, trace(qemu_command(target, program, folder), program, folder,
                                                          "_Z11tflm_invokev", STACK_USED_BELOW))
                hybgen_functions, hybgen_inlined, kept = hybgen_profile(hybgen, model, target, src.hybgen_arg,
                                                                        h["compiler_flags"])
                profiles["%s:%s" % (model, target)] = {"tflm": tflm_functions.most_common(),
                                                       "hybgen": hybgen_functions.most_common(),
                                                       "hybgen_inlined": hybgen_inlined.most_common(),
                                                       "hybgen_build": kept}
    text = table(rows)
    for key, p in profiles.items():
        for tool, what in (("hybgen", "hybgen: instructions per function"),
                           ("hybgen_inlined", "hybgen: instructions per source function, inlined ones apart"),
                           ("tflm", "TFLM + CMSIS-NN: instructions per function")):
            total = sum(n for _, n in p[tool])
            text += "\n%s, %s, in one inference (%d in all)\n\n" % (key, what, total)
            for name, n in p[tool][:src.top]:
                text += "    %12d  %5.1f%%  %s\n" % (n, 100.0 * n / total, name[:150])
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    with open(out_path, "w") as f:
        f.write(text)
    info = {
        "compiler": tool_version(["arm-none-eabi-g++", "--version"]),
        "emulator": tool_version(["qemu-system-arm", "--version"]),
        "commits": {flag: git_commit(getattr(src, flag))
                    for flag in ("tflite_micro", "cmsis_nn", "flatbuffers", "gemmlowp", "ruy")},
        "seconds": round(time.time() - started, 1), "hybgen_args": src.hybgen_arg,
        "tflm_flags": {"common": " ".join(TFLM_COMMON), "core": CORE_OPT, "kernels": KERNEL_OPT,
                       "cmsis_nn": CMSIS_NN_OPT, "arena_capacity": ARENA_BYTES},
    }
    with open(os.path.splitext(out_path)[0] + ".json", "w") as f:
        json.dump({"info": info, "rows": rows, "profiles": profiles}, f, indent=1)
    print(text, end="")
    log("wrote %s and %s (%.0f s)" % (out_path, os.path.splitext(out_path)[0] + ".json", time.time() - started))


if __name__ == "__main__":
    main()
