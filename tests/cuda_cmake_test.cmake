# hybgen_add_model(... ARCH cuda) in a project of its own: configures and
# builds (compiles and links; nothing runs, no GPU needed) a library from a
# model with embedded and with EXTERNAL_WEIGHTS (and PRECISION tf32), and in
# half precision with half edges (PRECISION fp16 IO_PRECISION half), checks the files hybgen
# generated and that NAME.cu was compiled for sm_80 and sm_90; that a
# caller's CMAKE_CUDA_ARCHITECTURES wins; and that a project without the
# CUDA language gets a clear error. Run with:
#   cmake -DHYBGEN_EXE=<hybgen binary> -DHYBGEN_SOURCE_DIR=<source tree> -DWORK_DIR=<scratch>
#         [-DMODEL=<model.json with one input and one output>] [-DCUDA_COMPILER=<nvcc>]
#         -P cuda_cmake_test.cmake
if(NOT MODEL)
  set(MODEL "${HYBGEN_SOURCE_DIR}/examples/cmake-consumer/model/tiny_mlp.json")
endif()

include(${CMAKE_CURRENT_LIST_DIR}/run_step.cmake)

file(REMOVE_RECURSE "${WORK_DIR}")
set(project_dir "${WORK_DIR}/project")

# The project: hybgen as an imported executable (what find_package(hybgen)
# gives), the function from the source tree, two models and a program that
# links both.
file(WRITE "${project_dir}/CMakeLists.txt" [=[
cmake_minimum_required(VERSION 3.18)
if(WITH_CUDA)
  project(hybgen_cuda_consumer LANGUAGES CXX CUDA)
else()
  project(hybgen_cuda_consumer LANGUAGES CXX)
endif()
add_executable(hybgen::hybgen IMPORTED)
set_target_properties(hybgen::hybgen PROPERTIES IMPORTED_LOCATION "${HYBGEN_EXE}")
include("${HYBGEN_SOURCE_DIR}/cmake/HybgenAddModel.cmake")

hybgen_add_model(TARGET net MODEL "${MODEL}" NAMESPACE net ARCH cuda)
hybgen_add_model(TARGET net_ext MODEL "${MODEL}" NAMESPACE net_ext ARCH cuda EXTERNAL_WEIGHTS PRECISION tf32)
hybgen_add_model(TARGET net_half MODEL "${MODEL}" NAMESPACE net_half ARCH cuda PRECISION fp16 IO_PRECISION half)

add_executable(app main.cpp)
target_link_libraries(app PRIVATE net net_ext net_half)
]=])
file(WRITE "${project_dir}/main.cpp" [=[
// Links the generated CUDA libraries (a model of one input and one output).
#include "net.h"
#include "net_ext.h"
#include "net_half.h"

#include <type_traits>

// run() of the half model: its input is __half; its output the type its last node makes.
template <class In, class Out>
int run_half(int (*run)(const net_half::Model*, const In*, Out*, cudaStream_t), const net_half::Model* model,
             void* in, void* out) {
  static_assert(std::is_same<In, __half>::value, "IO_PRECISION half: the input is __half");
  return run(model, static_cast<const In*>(in), static_cast<Out*>(out), nullptr);
}

int main() {
  float* in = nullptr;
  float* out = nullptr;
  if (cudaMalloc(&in, 1 << 20) != cudaSuccess || cudaMalloc(&out, 1 << 20) != cudaSuccess) return 1;
  net::Model model;
  if (net::init(&model) != net::kOk || net::run(&model, in, out, nullptr) != net::kOk) return 1;
  net::release(&model);
  static unsigned char weights[net_ext::kWeightBytes > 0 ? net_ext::kWeightBytes : 1];
  net_ext::Model ext;
  if (net_ext::init(&ext, weights) != net_ext::kOk || net_ext::run(&ext, in, out, nullptr) != net_ext::kOk) return 1;
  net_ext::release(&ext);
  net_half::Model half;  // run() takes and gives __half
  if (net_half::init(&half) != net_half::kOk || run_half(&net_half::run, &half, in, out) != net_half::kOk) return 1;
  net_half::release(&half);
  return 0;
}
]=])

set(common_args "-DHYBGEN_EXE=${HYBGEN_EXE}" "-DHYBGEN_SOURCE_DIR=${HYBGEN_SOURCE_DIR}" "-DMODEL=${MODEL}"
                -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
if(CUDA_COMPILER)
  list(APPEND common_args "-DCMAKE_CUDA_COMPILER=${CUDA_COMPILER}")
endif()

# 1. Default architectures: configure, build, then check what was made.
set(build "${WORK_DIR}/build")
run_step("configure with CUDA" ${CMAKE_COMMAND} -S "${project_dir}" -B "${build}" -DWITH_CUDA=ON ${common_args})
run_step("build" ${CMAKE_COMMAND} --build "${build}")
foreach(file net/net.cu net/net.h net/net_weights.cpp net/net.manifest.json net_ext/net_ext.cu net_ext/net_ext.h
             net_ext/net_ext.weights.bin)
  if(NOT EXISTS "${build}/hybgen/${file}")
    message(FATAL_ERROR "hybgen did not generate ${file}")
  endif()
endforeach()
if(EXISTS "${build}/hybgen/net_ext/net_ext_weights.cpp")
  message(FATAL_ERROR "EXTERNAL_WEIGHTS still generated net_ext_weights.cpp")
endif()
file(READ "${build}/hybgen/net_ext/net_ext.manifest.json" manifest)
if(NOT manifest MATCHES "\"precision\": \"tf32\"")
  message(FATAL_ERROR "PRECISION tf32 did not reach the generated code:\n${manifest}")
endif()
file(READ "${build}/hybgen/net_half/net_half.manifest.json" manifest)
if(NOT manifest MATCHES "\"precision\": \"fp16\"" OR NOT manifest MATCHES "\"dtype\": \"float16\"")
  message(FATAL_ERROR "PRECISION fp16 IO_PRECISION half did not reach the generated code:\n${manifest}")
endif()
file(READ "${build}/compile_commands.json" commands)
string(REGEX MATCH "[^\n]*net\\.cu\\.o[^\n]*" net_command "${commands}")
if(NOT net_command)
  message(FATAL_ERROR "no compile command for net.cu:\n${commands}")
endif()
foreach(sm sm_80 sm_90)
  if(NOT net_command MATCHES "${sm}")
    message(FATAL_ERROR "net.cu was not compiled for ${sm}: ${net_command}")
  endif()
endforeach()
message(STATUS "net.cu compiled for sm_80 and sm_90")
string(REGEX MATCH "[^\n]*net_half\\.cu\\.o[^\n]*" half_command "${commands}")
if(NOT half_command MATCHES "sm_80" OR NOT half_command MATCHES "sm_90a")
  message(FATAL_ERROR "PRECISION fp16: net_half.cu was not compiled for sm_80 and sm_90a: ${half_command}")
endif()

# 2. The caller's architectures win (configure only: the flags are decided then).
set(build86 "${WORK_DIR}/build86")
run_step("configure with CMAKE_CUDA_ARCHITECTURES=86" ${CMAKE_COMMAND} -S "${project_dir}" -B "${build86}" -DWITH_CUDA=ON
         -DCMAKE_CUDA_ARCHITECTURES=86 ${common_args})
file(READ "${build86}/compile_commands.json" commands)
string(REGEX MATCH "[^\n]*net\\.cu\\.o[^\n]*" net_command "${commands}")
if(NOT net_command MATCHES "sm_86" OR net_command MATCHES "sm_80")
  message(FATAL_ERROR "CMAKE_CUDA_ARCHITECTURES=86 was not honoured: ${net_command}")
endif()

# 3. Without the CUDA language: a clear error, not a half-made target.
execute_process(COMMAND ${CMAKE_COMMAND} -S "${project_dir}" -B "${WORK_DIR}/build_nocuda" ${common_args}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX REPLACE "[ \n]+" " " said "${out}${err}")  # CMake wraps messages
if(rc EQUAL 0 OR NOT said MATCHES "ARCH cuda\\): the CUDA language is not enabled")
  message(FATAL_ERROR "a project without CUDA configured (${rc}) or said something else:\n${out}\n${err}")
endif()
message(STATUS "without CUDA: the expected error")
