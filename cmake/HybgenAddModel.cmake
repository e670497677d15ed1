# hybgen_add_model(TARGET <target> MODEL <model.json | NAME-symbol.json | model.onnx | model.tflite>
#                  [WEIGHTS <model.safetensors | NAME-XXXX.params | ONNX external data files...>]
#                  [SHAPES <input>=<d1>,<d2>... ...]
#                  [NAMESPACE <ns>] [NAME <stem>]
#                  [ARCH generic|x86-64-v3|x86-64-v3-vnni|x86-64-v4|x86-64-v4-vnni|armv8-a|cortex-m4|cortex-m7|
#                        cortex-m55|native|cuda]
#                  [EXTERNAL_WEIGHTS] [SMALL_ARENA] [IO_PRECISION fp32|quantized|half] [PRECISION fp32|tf32|fp16|bf16]
#                  [MAX_WEIGHT_GROWTH <factor>]
#                  [QUANTIZE int8 CALIBRATION <samples.npy>... [CALIBRATION_INPUT <input>]
#                   [QUANTIZE_METHOD minmax|percentile|entropy]])
#
# Generates C++ for a model at build time and wraps it in a static library
# target that a firmware or app project links:
#
#   find_package(hybgen REQUIRED)          # or add_subdirectory(hybgen)
#   hybgen_add_model(TARGET mlp_model MODEL model/mlp.json NAMESPACE mlp)
#   target_link_libraries(app PRIVATE mlp_model)   # then #include "mlp_model.h"
#
# The code is regenerated when the model, its weights or the hybgen binary
# (which embeds the templates) change. WEIGHTS defaults to the .safetensors
# beside MODEL, or for an MXNet export (NAME-symbol.json) to the
# NAME-XXXX.params beside it of the highest epoch; SHAPES gives the input
# shapes an MXNet export lacks (hybgen's --shape, e.g. SHAPES data=1,1,28,28).
# An ONNX model (model.onnx) holds its weights: WEIGHTS, if given, lists the
# external data files next to it, so editing them regenerates the code;
# SHAPES fills its symbolic dimensions (SHAPES input=1,3,224,224 for a
# symbolic batch). A TFLite model (model.tflite) holds its weights too.
# NAME (file stem and C symbol prefix) defaults to TARGET; NAMESPACE defaults
# to NAME. ARCH is hybgen's --target (default generic, portable C++), which
# hybgen checks: for another, the library is compiled with -march=ARCH where
# the compiler takes that flag, and code that links it must run on such a
# CPU. A compiler that does not take it is an error, except in a
# cross-compiling build (CMAKE_TOOLCHAIN_FILE): there the toolchain's flags
# choose the CPU, as they must for a microcontroller (cortex-m4 and its
# peers are -mcpu=, and every object of one firmware image shares the
# toolchain's float ABI); examples/firmware has such a toolchain file. The
# hybgen binary always runs on the build machine. ARCH native picks the best
# one the build machine runs (from /proc/cpuinfo) and compiles with
# -march=native (tuned for this CPU), for programs built where they run.
# EXTERNAL_WEIGHTS leaves the weights out of the library: run() then takes
# them as an argument, the bytes of the file that the target's
# HYBGEN_WEIGHTS_FILE property names (generated at build time; the program
# reads or maps it, or the firmware image places it), for weights too large
# to compile or kept apart from the code. SMALL_ARENA is hybgen's
# --small-arena: im2col columns shrink to fit beside the activations, for a
# smaller arena at some speed. IO_PRECISION is hybgen's --io-precision:
# quantized makes run() take and give a quantized model's integers (int8 or
# uint8, at its edges' scales and zero points) instead of float32; half
# (with PRECISION fp16 or bf16) makes them take the halves the model stores.
# PRECISION is --precision (ARCH cuda): tf32 runs the GEMM and convolution
# tiles on TF32 tensor cores; fp16 and bf16 store weights and activations in
# half precision (run() stays float32 unless IO_PRECISION half).
# MAX_WEIGHT_GROWTH is --max-weight-growth: at most this many weight values
# per weight of the model (Winograd convolutions keep up to 4x; 1: only those
# that transform their filters as they run), for weights that must stay small.
# QUANTIZE int8 quantizes the model at build time with `hybgen quantize`
# (docs/quantization.md) and generates the int8 code: CALIBRATION lists the
# float32 .npy files of sample inputs (first dimension the samples, run in
# chunks of the model's batch), CALIBRATION_INPUT names the input they feed
# (default: the model's only one), QUANTIZE_METHOD is --method (default
# minmax). The int8 model is written beside the generated code as
# NAME_int8.json + NAME_int8.safetensors (the target's HYBGEN_QUANTIZED_MODEL
# property names the .json, for `hybgen verify` or `hybgen run`), with the
# SQNR table in NAME_int8.sqnr.txt (HYBGEN_QUANTIZE_REPORT). Editing the model,
# its weights or a calibration file quantizes again. Not with ARCH cuda, which
# has no int8 kernels.
# ARCH cuda generates CUDA (NAME.cu, NAME.h, NAME_weights.cpp that init()
# uploads): the caller's project must have enabled the CUDA language
# (project(... LANGUAGES CXX CUDA) or enable_language(CUDA) at file scope;
# CMake does not allow it inside a function). The library compiles NAME.cu
# for the target property CUDA_ARCHITECTURES: CMAKE_CUDA_ARCHITECTURES when
# the caller chose it (-D, CUDAARCHS or set() before the call), else 80;90
# (the generated code needs sm_80 or later). It links CUDA::cudart
# publicly (NAME.h includes <cuda_runtime.h>).
include(CheckCXXCompilerFlag)

# The best --target this (build) machine runs.
function(_hybgen_native_arch out)
  set(arch generic)
  if(CMAKE_HOST_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
    set(arch armv8-a)
  elseif(EXISTS /proc/cpuinfo)
    file(READ /proc/cpuinfo cpuinfo)
    if(cpuinfo MATCHES " avx512f " AND cpuinfo MATCHES " avx512bw " AND cpuinfo MATCHES " avx512vl ")
      set(arch x86-64-v4)
    elseif(cpuinfo MATCHES " avx2 " AND cpuinfo MATCHES " fma ")
      set(arch x86-64-v3)
    endif()
  endif()
  set(${out} ${arch} PARENT_SCOPE)
endfunction()

function(hybgen_add_model)
  cmake_parse_arguments(PARSE_ARGV 0 HG "EXTERNAL_WEIGHTS;SMALL_ARENA"
                        "TARGET;MODEL;WEIGHTS;NAMESPACE;NAME;ARCH;QUANTIZE;CALIBRATION_INPUT;QUANTIZE_METHOD;IO_PRECISION;PRECISION;MAX_WEIGHT_GROWTH"
                        "SHAPES;CALIBRATION")
  if(HG_UNPARSED_ARGUMENTS)
    message(WARNING "hybgen_add_model: ignoring unknown arguments: ${HG_UNPARSED_ARGUMENTS}")
  endif()
  foreach(required TARGET MODEL)
    if(NOT HG_${required})
      message(FATAL_ERROR "hybgen_add_model: ${required} is required")
    endif()
  endforeach()
  if("QUANTIZE" IN_LIST HG_KEYWORDS_MISSING_VALUES OR (DEFINED HG_QUANTIZE AND NOT HG_QUANTIZE STREQUAL "int8"))
    message(FATAL_ERROR "hybgen_add_model(TARGET ${HG_TARGET}): QUANTIZE takes int8, not '${HG_QUANTIZE}'")
  endif()
  if(HG_QUANTIZE AND NOT HG_CALIBRATION)
    message(FATAL_ERROR "hybgen_add_model(TARGET ${HG_TARGET}): QUANTIZE int8 needs CALIBRATION <samples.npy>...: "
                        "float32 arrays of sample inputs, preprocessed as at inference, to choose the int8 ranges")
  endif()
  if(NOT HG_QUANTIZE)
    foreach(option CALIBRATION CALIBRATION_INPUT QUANTIZE_METHOD)
      if(HG_${option})
        message(FATAL_ERROR "hybgen_add_model(TARGET ${HG_TARGET}): ${option} is given without QUANTIZE int8")
      endif()
    endforeach()
  endif()
  if(HG_QUANTIZE_METHOD AND NOT HG_QUANTIZE_METHOD MATCHES "^(minmax|percentile|entropy)$")
    message(FATAL_ERROR "hybgen_add_model(TARGET ${HG_TARGET}): QUANTIZE_METHOD takes minmax, percentile or "
                        "entropy, not '${HG_QUANTIZE_METHOD}'")
  endif()
  if(HG_IO_PRECISION AND NOT HG_IO_PRECISION MATCHES "^(fp32|quantized|half)$")
    message(FATAL_ERROR "hybgen_add_model(TARGET ${HG_TARGET}): IO_PRECISION takes fp32, quantized or half, not "
                        "'${HG_IO_PRECISION}'")
  endif()
  if(HG_PRECISION AND NOT HG_PRECISION MATCHES "^(fp32|tf32|fp16|bf16)$")
    message(FATAL_ERROR
            "hybgen_add_model(TARGET ${HG_TARGET}): PRECISION takes fp32, tf32, fp16 or bf16, not '${HG_PRECISION}'")
  endif()
  if(HG_MAX_WEIGHT_GROWTH AND NOT HG_MAX_WEIGHT_GROWTH MATCHES "^[0-9]+(\\.[0-9]+)?$")
    message(FATAL_ERROR "hybgen_add_model(TARGET ${HG_TARGET}): MAX_WEIGHT_GROWTH takes a number of at least 1, not "
                        "'${HG_MAX_WEIGHT_GROWTH}'")
  endif()
  if(NOT TARGET hybgen::hybgen)
    message(FATAL_ERROR "hybgen_add_model: the hybgen::hybgen executable is not known; "
                        "call find_package(hybgen) or add_subdirectory(<hybgen source>) first")
  endif()

  get_filename_component(model "${HG_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  # An ONNX model (by name, or by content: a ModelProto starts with byte 0x08)
  # holds its weights, or names external data files next to it: WEIGHTS then
  # lists those files, for dependencies only. A TFLite model (by name, or by
  # its FlatBuffer file identifier "TFL3" at byte 4) holds its own.
  set(holds_weights FALSE)
  if(model MATCHES "\\.(onnx|tflite)$")
    set(holds_weights TRUE)
  elseif(EXISTS "${model}" AND NOT IS_DIRECTORY "${model}")
    file(READ "${model}" model_head LIMIT 8 HEX)
    if(model_head MATCHES "^08" OR model_head MATCHES "^........54464c33$")
      set(holds_weights TRUE)
    endif()
  endif()
  set(weights_flags "")
  if(holds_weights)
    set(weights "")
    foreach(w IN LISTS HG_WEIGHTS)
      get_filename_component(w "${w}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
      list(APPEND weights "${w}")
    endforeach()
  elseif(HG_WEIGHTS)
    get_filename_component(weights "${HG_WEIGHTS}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  elseif(model MATCHES "-symbol\\.json$")
    # As hybgen finds them: NAME-XXXX.params beside the symbol file, the highest epoch.
    string(REGEX REPLACE "-symbol\\.json$" "" prefix "${model}")
    file(GLOB params LIST_DIRECTORIES false "${prefix}-[0-9][0-9][0-9][0-9].params")
    if(NOT params)
      message(FATAL_ERROR "hybgen_add_model(TARGET ${HG_TARGET}): no ${prefix}-XXXX.params beside the MXNet symbol "
                          "file ${model}; name the weights with WEIGHTS")
    endif()
    list(SORT params)
    list(GET params -1 weights)
  else()
    string(REGEX REPLACE "\\.[^./]*$" ".safetensors" weights "${model}")
  endif()
  if(NOT holds_weights)
    set(weights_flags --weights "${weights}")
  endif()
  set(name "${HG_TARGET}")
  if(HG_NAME)
    set(name "${HG_NAME}")
  endif()
  set(namespace "${name}")
  if(HG_NAMESPACE)
    set(namespace "${HG_NAMESPACE}")
  endif()

  set(arch generic)
  if(HG_ARCH STREQUAL "native")
    _hybgen_native_arch(arch)
  elseif(HG_ARCH)
    set(arch "${HG_ARCH}")
  endif()

  set(code_ext cpp)
  if(HG_QUANTIZE AND arch STREQUAL "cuda")
    message(FATAL_ERROR "hybgen_add_model(TARGET ${HG_TARGET}): QUANTIZE int8 is not supported with ARCH cuda "
                        "(the CUDA backend has no int8 kernels yet; docs/quantization.md)")
  endif()
  if(arch STREQUAL "cuda")
    set(code_ext cu)
    get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
    if(NOT "CUDA" IN_LIST languages OR NOT CMAKE_CUDA_COMPILER)
      message(FATAL_ERROR "hybgen_add_model(TARGET ${HG_TARGET} ... ARCH cuda): the CUDA language is not enabled. "
                          "Add CUDA to the project's languages (project(<name> LANGUAGES CXX CUDA)) or call "
                          "enable_language(CUDA) at file scope before hybgen_add_model; CMake needs nvcc for it "
                          "(set CMAKE_CUDA_COMPILER or put nvcc on the PATH).")
    endif()
  endif()

  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/hybgen/${HG_TARGET}")
  set(sources "${out_dir}/${name}.${code_ext}" "${out_dir}/${name}.h")
  set(generate_flags "")
  if(HG_EXTERNAL_WEIGHTS)
    set(weights_output "${out_dir}/${name}.weights.bin")
    set(generate_flags "--external-weights")
  else()
    set(weights_output "${out_dir}/${name}_weights.cpp")
    list(APPEND sources "${weights_output}")
  endif()
  if(HG_SMALL_ARENA)
    list(APPEND generate_flags "--small-arena")
  endif()
  if(HG_IO_PRECISION)
    list(APPEND generate_flags --io-precision "${HG_IO_PRECISION}")
  endif()
  if(HG_PRECISION)
    list(APPEND generate_flags --precision "${HG_PRECISION}")
  endif()
  if(HG_MAX_WEIGHT_GROWTH)
    list(APPEND generate_flags --max-weight-growth "${HG_MAX_WEIGHT_GROWTH}")
  endif()
  set(shape_flags "")
  foreach(shape IN LISTS HG_SHAPES)
    list(APPEND shape_flags --shape "${shape}")
  endforeach()
  set(generated_from "${HG_MODEL}")
  if(HG_QUANTIZE)
    # `hybgen quantize` reads the float model (and SHAPES); the code is
    # generated from the int8 model it writes, which holds its shapes.
    set(calibration "")
    set(calibration_flags "")
    foreach(c IN LISTS HG_CALIBRATION)
      get_filename_component(c "${c}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
      list(APPEND calibration "${c}")
      list(APPEND calibration_flags --calibration "${c}")
    endforeach()
    if(HG_CALIBRATION_INPUT)
      list(APPEND calibration_flags --input "${HG_CALIBRATION_INPUT}")
    endif()
    if(HG_QUANTIZE_METHOD)
      list(APPEND calibration_flags --method "${HG_QUANTIZE_METHOD}")
    endif()
    set(quantized "${out_dir}/${name}_int8")
    add_custom_command(
      OUTPUT "${quantized}.json" "${quantized}.safetensors" "${quantized}.sqnr.txt"
      COMMAND ${CMAKE_COMMAND} -E make_directory "${out_dir}"
      COMMAND hybgen::hybgen quantize "${model}" ${weights_flags} ${shape_flags} ${calibration_flags}
              --report "${quantized}.sqnr.txt" -o "${quantized}"
      DEPENDS "${model}" ${weights} ${calibration} hybgen::hybgen
      COMMENT "hybgen: quantizing ${name} (int8) from ${HG_MODEL}"
      VERBATIM)
    set(model "${quantized}.json")
    set(weights "${quantized}.safetensors")
    set(weights_flags --weights "${weights}")
    set(shape_flags "")
    set(generated_from "${name}_int8.json")
  endif()
  add_custom_command(
    OUTPUT "${out_dir}/${name}.${code_ext}" "${out_dir}/${name}.h" "${weights_output}" "${out_dir}/${name}.manifest.json"
    COMMAND hybgen::hybgen "${model}" -o "${out_dir}" ${weights_flags} --name "${name}"
            --namespace "${namespace}" --target "${arch}" ${generate_flags} ${shape_flags}
    DEPENDS "${model}" ${weights} hybgen::hybgen
    COMMENT "hybgen: generating ${name} from ${generated_from}"
    VERBATIM)

  add_library(${HG_TARGET} STATIC ${sources})
  target_include_directories(${HG_TARGET} PUBLIC "$<BUILD_INTERFACE:${out_dir}>")
  target_compile_features(${HG_TARGET} PUBLIC cxx_std_11)
  if(HG_ARCH STREQUAL "native")
    # This machine's own -march: the target's instructions, tuned for this CPU.
    target_compile_options(${HG_TARGET} PRIVATE "-march=native")
  elseif(arch STREQUAL "cuda")
    # The caller's CMAKE_CUDA_ARCHITECTURES if it chose one; CMake's own
    # default (the compiler's, cached with this help string) does not count.
    get_property(arch_help CACHE CMAKE_CUDA_ARCHITECTURES PROPERTY HELPSTRING)
    if(NOT CMAKE_CUDA_ARCHITECTURES
       OR (arch_help STREQUAL "CUDA architectures" AND "$ENV{CUDAARCHS}" STREQUAL ""
           AND "${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "$CACHE{CMAKE_CUDA_ARCHITECTURES}"))
      # fp16 and bf16 run Hopper's warpgroup products, which only sm_90a code has.
      if(HG_PRECISION STREQUAL "fp16" OR HG_PRECISION STREQUAL "bf16")
        set_target_properties(${HG_TARGET} PROPERTIES CUDA_ARCHITECTURES "80;90a-real")
      else()
        set_target_properties(${HG_TARGET} PROPERTIES CUDA_ARCHITECTURES "80;90")
      endif()
    endif()
    target_compile_features(${HG_TARGET} PRIVATE cuda_std_17)
    if(NOT TARGET CUDA::cudart)
      find_package(CUDAToolkit REQUIRED)
    endif()
    target_link_libraries(${HG_TARGET} PUBLIC CUDA::cudart)
  elseif(NOT arch STREQUAL "generic")
    string(MAKE_C_IDENTIFIER "HYBGEN_CXX_TAKES_MARCH_${arch}" takes_march)
    check_cxx_compiler_flag("-march=${arch}" ${takes_march})
    if(${takes_march})
      target_compile_options(${HG_TARGET} PRIVATE "-march=${arch}")
    elseif(NOT CMAKE_CROSSCOMPILING)
      message(FATAL_ERROR "hybgen_add_model(TARGET ${HG_TARGET} ... ARCH ${arch}): the C++ compiler "
                          "(${CMAKE_CXX_COMPILER}) does not take -march=${arch}. A microcontroller ARCH is built by a "
                          "cross compiler: configure with a toolchain file (-DCMAKE_TOOLCHAIN_FILE=...) whose flags "
                          "choose the CPU, as examples/firmware/arm-none-eabi.cmake does for cortex-m4. (`hybgen "
                          "--help` lists the --target names ARCH takes.)")
    endif()
  endif()
  set_target_properties(${HG_TARGET} PROPERTIES HYBGEN_MANIFEST "${out_dir}/${name}.manifest.json")
  if(HG_EXTERNAL_WEIGHTS)
    set_target_properties(${HG_TARGET} PROPERTIES HYBGEN_WEIGHTS_FILE "${weights_output}")
  endif()
  if(HG_QUANTIZE)
    set_target_properties(${HG_TARGET} PROPERTIES HYBGEN_QUANTIZED_MODEL "${quantized}.json"
                                                  HYBGEN_QUANTIZE_REPORT "${quantized}.sqnr.txt")
  endif()
endfunction()
