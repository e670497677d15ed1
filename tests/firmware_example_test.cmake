# examples/firmware as its README builds it: installs the built hybgen into a
# scratch prefix, cross-compiles the example with its arm-none-eabi toolchain
# file, runs it on the emulated board (qemu-system-arm, mps2-an386) and checks
# that it names the bundled digit. Before that, hybgen_add_model(... ARCH
# cortex-m4) in a project built by the host compiler must fail with a clear
# message. Without the cross compiler or qemu the test prints "SKIPPED: ..."
# (ctest reports it skipped). Run with:
#   cmake -DHYBGEN_BUILD_DIR=... -DFIRMWARE_DIR=... -DWORK_DIR=... -P firmware_example_test.cmake
include(${CMAKE_CURRENT_LIST_DIR}/run_step.cmake)

file(REMOVE_RECURSE "${WORK_DIR}")
run_step("install hybgen" ${CMAKE_COMMAND} --install "${HYBGEN_BUILD_DIR}" --prefix "${WORK_DIR}/prefix")

# 1. A microcontroller ARCH without a cross toolchain: the host compiler does
#    not take -march=cortex-m4, and the function says what to do instead.
set(host_project "${WORK_DIR}/host_project")
file(WRITE "${host_project}/CMakeLists.txt" "
cmake_minimum_required(VERSION 3.16)
project(host_project LANGUAGES CXX)
find_package(hybgen REQUIRED)
hybgen_add_model(TARGET mnist MODEL \"${FIRMWARE_DIR}/model/mnist-symbol.json\" SHAPES data=1,1,28,28 ARCH cortex-m4)
")
execute_process(COMMAND ${CMAKE_COMMAND} -S "${host_project}" -B "${WORK_DIR}/host_build"
                        "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX REPLACE "[ \n]+" " " said "${out}${err}")  # CMake wraps messages
if(rc EQUAL 0 OR NOT said MATCHES "ARCH cortex-m4\\): the C\\+\\+ compiler .* does not take -march=cortex-m4")
  message(FATAL_ERROR "ARCH cortex-m4 with the host compiler configured (${rc}) or said something else:\n${out}\n${err}")
endif()
message(STATUS "ARCH cortex-m4 with the host compiler: the expected error")

# 2. The example itself.
foreach(program arm-none-eabi-gcc arm-none-eabi-g++ qemu-system-arm)
  find_program(found_${program} ${program})
  if(NOT found_${program})
    message("SKIPPED: examples/firmware needs ${program}, which is not on the PATH "
            "(Debian: apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm)")
    return()
  endif()
endforeach()
run_step("configure the firmware" ${CMAKE_COMMAND} -S "${FIRMWARE_DIR}" -B "${WORK_DIR}/build"
         "-DCMAKE_TOOLCHAIN_FILE=${FIRMWARE_DIR}/arm-none-eabi.cmake" "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix")
run_step("build the firmware" ${CMAKE_COMMAND} --build "${WORK_DIR}/build")
# The float32 image and the int8 one (hybgen_add_model(... QUANTIZE int8
# IO_PRECISION quantized), whose scores are int8).
foreach(image mnist_firmware mnist_int8_firmware)
  run_step("run ${image} on mps2-an386" "${found_qemu-system-arm}" -machine mps2-an386 -nographic -monitor none
           -serial none -semihosting-config enable=on,target=native -kernel "${WORK_DIR}/build/${image}.elf")
  message(STATUS "${step_output}")
  if(NOT step_output MATCHES "the digit is 7 \\(labelled 7\\)")
    message(FATAL_ERROR "${image} did not name the bundled 7:\n${step_output}")
  endif()
  if(image STREQUAL "mnist_int8_firmware" AND NOT step_output MATCHES "scores \\(int8")
    message(FATAL_ERROR "${image} did not take and give int8 (IO_PRECISION quantized):\n${step_output}")
  endif()
endforeach()
