# hybgen_add_model(... QUANTIZE int8 CALIBRATION ...) in a project of its
# own: the tiny MLP of examples/cmake-consumer is quantized at build time on
# tests/data/quantize/tiny_mlp_calibration.npy, its int8 code generated,
# and a program linking the library runs it against the float model's
# expected output. A second build does nothing; an edited calibration file
# quantizes again. QUANTIZE without CALIBRATION, an unknown QUANTIZE value
# and CALIBRATION without QUANTIZE stop the configure with a message. Run with:
#   cmake -DHYBGEN_EXE=<hybgen binary> -DHYBGEN_SOURCE_DIR=<source tree> -DWORK_DIR=<scratch> -P quantize_cmake_test.cmake
include(${CMAKE_CURRENT_LIST_DIR}/run_step.cmake)

file(REMOVE_RECURSE "${WORK_DIR}")
set(project_dir "${WORK_DIR}/project")
file(COPY "${HYBGEN_SOURCE_DIR}/examples/cmake-consumer/model/tiny_mlp.json"
          "${HYBGEN_SOURCE_DIR}/examples/cmake-consumer/model/tiny_mlp.safetensors"
          "${HYBGEN_SOURCE_DIR}/examples/cmake-consumer/model/expected_output.h"
          "${HYBGEN_SOURCE_DIR}/tests/data/quantize/tiny_mlp_calibration.npy"
     DESTINATION "${project_dir}/model")
file(WRITE "${project_dir}/CMakeLists.txt" [=[
cmake_minimum_required(VERSION 3.18)
project(hybgen_quantize_consumer LANGUAGES CXX)
add_executable(hybgen::hybgen IMPORTED)
set_target_properties(hybgen::hybgen PROPERTIES IMPORTED_LOCATION "${HYBGEN_EXE}")
include("${HYBGEN_SOURCE_DIR}/cmake/HybgenAddModel.cmake")
if(CASE STREQUAL "no_calibration")
  hybgen_add_model(TARGET tiny_int8 MODEL model/tiny_mlp.json QUANTIZE int8)
elseif(CASE STREQUAL "int4")
  hybgen_add_model(TARGET tiny_int8 MODEL model/tiny_mlp.json QUANTIZE int4 CALIBRATION model/tiny_mlp_calibration.npy)
elseif(CASE STREQUAL "no_quantize")
  hybgen_add_model(TARGET tiny_int8 MODEL model/tiny_mlp.json CALIBRATION model/tiny_mlp_calibration.npy)
else()
  hybgen_add_model(TARGET tiny_int8 MODEL model/tiny_mlp.json NAMESPACE tiny QUANTIZE int8
                   CALIBRATION model/tiny_mlp_calibration.npy CALIBRATION_INPUT data QUANTIZE_METHOD percentile)
  add_executable(app main.cpp)
  target_include_directories(app PRIVATE model)
  target_link_libraries(app PRIVATE tiny_int8)
  get_target_property(quantized tiny_int8 HYBGEN_QUANTIZED_MODEL)
  get_target_property(report tiny_int8 HYBGEN_QUANTIZE_REPORT)
  file(WRITE "${CMAKE_BINARY_DIR}/properties.txt" "${quantized}\n${report}\n")
endif()
]=])
file(WRITE "${project_dir}/main.cpp" [=[
// Runs the int8 code on the input examples/cmake-consumer's main.cpp uses
// and compares it with the float model's output, computed independently.
#include <cmath>
#include <cstdio>

#include "expected_output.h"
#include "tiny_int8.h"

int main() {
  alignas(tiny::kArenaAlignment) static unsigned char arena[tiny::kArenaBytes];
  float input[8];
  for (int i = 0; i < 8; ++i) input[i] = 0.25f * static_cast<float>(i) - 1.0f;
  float prob[3];
  if (tiny::run(input, prob, arena) != 0) return 1;
  double worst = 0;
  for (int i = 0; i < 3; ++i) {
    std::printf("int8 prob[%d] = %.5f (float %.5f)\n", i, prob[i], kExpectedOutput[i]);
    worst = std::fmax(worst, std::fabs(prob[i] - kExpectedOutput[i]));
  }
  // Two int8 layers of 8 and 16 inputs: a few hundredths in the logits at most.
  std::printf("%s: int8 within %.4f of float\n", worst < 0.02 ? "OK" : "FAIL", worst);
  return worst < 0.02 ? 0 : 1;
}
]=])

set(build "${WORK_DIR}/build")
set(configure ${CMAKE_COMMAND} -S "${project_dir}" "-DHYBGEN_EXE=${HYBGEN_EXE}"
              "-DHYBGEN_SOURCE_DIR=${HYBGEN_SOURCE_DIR}" -DCMAKE_BUILD_TYPE=Release)
run_step("configure" ${configure} -B "${build}")
run_step("build" ${CMAKE_COMMAND} --build "${build}")
if(NOT step_output MATCHES "hybgen: quantizing tiny_int8" OR NOT step_output MATCHES "SQNR of each int8 node")
  message(FATAL_ERROR "the build did not quantize the model:\n${step_output}")
endif()
run_step("run" "${build}/app")
message(STATUS "${step_output}")
if(NOT step_output MATCHES "OK: int8 within")
  message(FATAL_ERROR "the int8 model's output is not close to the float model's")
endif()

# The generated code is the int8 model's.
file(STRINGS "${build}/properties.txt" properties)
list(GET properties 0 quantized)
list(GET properties 1 report)
file(READ "${quantized}" quantized_json)
if(NOT quantized_json MATCHES "\"int8\"" OR NOT EXISTS "${report}")
  message(FATAL_ERROR "${quantized} holds no int8 weights, or ${report} is missing")
endif()
file(GLOB generated "${build}/hybgen/tiny_int8/tiny_int8.cpp")
file(READ "${generated}" generated_code)
if(NOT generated_code MATCHES "int8_t")
  message(FATAL_ERROR "the generated code computes no int8")
endif()

# Up to date: nothing runs again. An edited calibration file: quantized and generated again.
run_step("build again" ${CMAKE_COMMAND} --build "${build}")
if(step_output MATCHES "hybgen: (quantizing|generating)")
  message(FATAL_ERROR "an up-to-date build ran hybgen again:\n${step_output}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E sleep 1)
file(TOUCH "${project_dir}/model/tiny_mlp_calibration.npy")
run_step("build after editing the calibration" ${CMAKE_COMMAND} --build "${build}")
if(NOT step_output MATCHES "hybgen: quantizing tiny_int8" OR NOT step_output MATCHES "hybgen: generating tiny_int8")
  message(FATAL_ERROR "an edited calibration file did not quantize again:\n${step_output}")
endif()
run_step("run again" "${build}/app")

# Mistakes stop the configure, naming what is wrong.
foreach(case IN ITEMS no_calibration int4 no_quantize)
  if(case STREQUAL "no_calibration")
    set(expected "QUANTIZE int8 needs CALIBRATION")
  elseif(case STREQUAL "int4")
    set(expected "QUANTIZE takes int8, not 'int4'")
  else()
    set(expected "CALIBRATION is given without QUANTIZE int8")
  endif()
  execute_process(COMMAND ${configure} -B "${WORK_DIR}/build-${case}" -DCASE=${case} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX REPLACE "[ \t\r\n]+" " " message "${out}${err}")  # CMake wraps its messages
  string(FIND "${message}" "${expected}" at)
  if(rc EQUAL 0 OR at EQUAL -1)
    message(FATAL_ERROR "configure with ${case}: expected a failure saying \"${expected}\" (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "configure with ${case}: refused")
endforeach()
