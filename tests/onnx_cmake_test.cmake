# hybgen_add_model(MODEL model.onnx SHAPES ...) in a project of its own: an
# ONNX model with a symbolic batch (fuzz/corpus/onnx/seed-convnet.onnx) is
# generated at build time with its batch from SHAPES, no --weights is passed,
# and a program linking the library runs it. A TFLite model (TFLM's int8
# hello_world, tests/data/tflite) beside it, also without --weights. Run with:
#   cmake -DHYBGEN_EXE=<hybgen binary> -DHYBGEN_SOURCE_DIR=<source tree> -DWORK_DIR=<scratch> -P onnx_cmake_test.cmake
include(${CMAKE_CURRENT_LIST_DIR}/run_step.cmake)

file(REMOVE_RECURSE "${WORK_DIR}")
set(project_dir "${WORK_DIR}/project")
file(COPY "${HYBGEN_SOURCE_DIR}/fuzz/corpus/onnx/seed-convnet.onnx" DESTINATION "${project_dir}/model")
file(COPY "${HYBGEN_SOURCE_DIR}/tests/data/tflite/hello_world_int8.tflite" DESTINATION "${project_dir}/model")
file(WRITE "${project_dir}/CMakeLists.txt" [=[
cmake_minimum_required(VERSION 3.18)
project(hybgen_onnx_consumer LANGUAGES CXX)
add_executable(hybgen::hybgen IMPORTED)
set_target_properties(hybgen::hybgen PROPERTIES IMPORTED_LOCATION "${HYBGEN_EXE}")
include("${HYBGEN_SOURCE_DIR}/cmake/HybgenAddModel.cmake")
hybgen_add_model(TARGET convnet MODEL model/seed-convnet.onnx SHAPES x=2,1,4,4)
hybgen_add_model(TARGET sine MODEL model/hello_world_int8.tflite)
add_executable(app main.cpp)
target_link_libraries(app PRIVATE convnet sine)
]=])
file(WRITE "${project_dir}/main.cpp" [=[
// Runs the generated model once on a constant input.
#include <cstdio>

#include "convnet.h"
#include "sine.h"

int main() {
  static_assert(convnet::kXSize == 2 * 1 * 4 * 4, "the batch comes from SHAPES");
  static float input[convnet::kXSize];
  static float output[convnet::kYSize];
  for (float& v : input) v = 0.25f;
  alignas(convnet::kArenaAlignment) static unsigned char arena[convnet::kArenaBytes];
  if (convnet::run(input, output, arena) != 0) return 1;
  std::printf("%g\n", static_cast<double>(output[0]));
  // The int8 sine model at pi / 2: about 1 (TFLM's example is within 0.1).
  const float x = 1.5707964f;
  float y = 0.0f;
  alignas(sine::kArenaAlignment) static unsigned char sine_arena[sine::kArenaBytes];
  if (sine::run(&x, &y, sine_arena) != 0) return 1;
  std::printf("sine %g\n", static_cast<double>(y));
  return y > 0.85f && y < 1.15f ? 0 : 1;
}
]=])
set(build "${WORK_DIR}/build")
run_step("configure" ${CMAKE_COMMAND} -S "${project_dir}" -B "${build}" "-DHYBGEN_EXE=${HYBGEN_EXE}"
         "-DHYBGEN_SOURCE_DIR=${HYBGEN_SOURCE_DIR}" -DCMAKE_BUILD_TYPE=Release)
run_step("build" ${CMAKE_COMMAND} --build "${build}" --verbose)
if(step_output MATCHES "--weights")
  message(FATAL_ERROR "hybgen was given --weights for an ONNX model:\n${step_output}")
endif()
run_step("run" "${build}/app")
