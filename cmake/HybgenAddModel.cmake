# hybgen_add_model(TARGET <target> MODEL <model.json>
#                  [WEIGHTS <model.safetensors>] [NAMESPACE <ns>] [NAME <stem>]
#                  [ARCH generic|x86-64-v3|x86-64-v4|armv8-a|native]
#                  [EXTERNAL_WEIGHTS] [SMALL_ARENA])
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
# beside MODEL; NAME (file stem and C symbol prefix) defaults to TARGET;
# NAMESPACE defaults to NAME. ARCH is hybgen's --target (default generic,
# portable C++): for another, the library is compiled with that -march, and
# code that links it must run on such a CPU. ARCH native picks the best one
# the build machine runs (from /proc/cpuinfo) and compiles with -march=native
# (tuned for this CPU), for programs built where they run.
# EXTERNAL_WEIGHTS leaves the weights out of the library: run() then takes
# them as an argument, the bytes of the file that the target's
# HYBGEN_WEIGHTS_FILE property names (generated at build time; the program
# reads or maps it, or the firmware image places it), for weights too large
# to compile or kept apart from the code. SMALL_ARENA is hybgen's
# --small-arena: im2col columns shrink to fit beside the activations, for a
# smaller arena at some speed.
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
  cmake_parse_arguments(PARSE_ARGV 0 HG "EXTERNAL_WEIGHTS;SMALL_ARENA" "TARGET;MODEL;WEIGHTS;NAMESPACE;NAME;ARCH" "")
  if(HG_UNPARSED_ARGUMENTS)
    message(WARNING "hybgen_add_model: ignoring unknown arguments: ${HG_UNPARSED_ARGUMENTS}")
  endif()
  foreach(required TARGET MODEL)
    if(NOT HG_${required})
      message(FATAL_ERROR "hybgen_add_model: ${required} is required")
    endif()
  endforeach()
  if(NOT TARGET hybgen::hybgen)
    message(FATAL_ERROR "hybgen_add_model: the hybgen::hybgen executable is not known; "
                        "call find_package(hybgen) or add_subdirectory(<hybgen source>) first")
  endif()

  get_filename_component(model "${HG_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(HG_WEIGHTS)
    get_filename_component(weights "${HG_WEIGHTS}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  else()
    string(REGEX REPLACE "\\.[^./]*$" ".safetensors" weights "${model}")
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

  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/hybgen/${HG_TARGET}")
  set(sources "${out_dir}/${name}.cpp" "${out_dir}/${name}.h")
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
  add_custom_command(
    OUTPUT "${out_dir}/${name}.cpp" "${out_dir}/${name}.h" "${weights_output}" "${out_dir}/${name}.manifest.json"
    COMMAND hybgen::hybgen "${model}" -o "${out_dir}" --weights "${weights}" --name "${name}"
            --namespace "${namespace}" --target "${arch}" ${generate_flags}
    DEPENDS "${model}" "${weights}" hybgen::hybgen
    COMMENT "hybgen: generating ${name} from ${HG_MODEL}"
    VERBATIM)

  add_library(${HG_TARGET} STATIC ${sources})
  target_include_directories(${HG_TARGET} PUBLIC "$<BUILD_INTERFACE:${out_dir}>")
  target_compile_features(${HG_TARGET} PUBLIC cxx_std_11)
  if(HG_ARCH STREQUAL "native")
    # This machine's own -march: the target's instructions, tuned for this CPU.
    target_compile_options(${HG_TARGET} PRIVATE "-march=native")
  elseif(NOT arch STREQUAL "generic")
    target_compile_options(${HG_TARGET} PRIVATE "-march=${arch}")
  endif()
  set_target_properties(${HG_TARGET} PROPERTIES HYBGEN_MANIFEST "${out_dir}/${name}.manifest.json")
  if(HG_EXTERNAL_WEIGHTS)
    set_target_properties(${HG_TARGET} PROPERTIES HYBGEN_WEIGHTS_FILE "${weights_output}")
  endif()
endfunction()
