# Installs the built hybgen into a scratch prefix, then configures, builds and
# runs examples/cmake-consumer against it with find_package(hybgen), the way
# an outside project would. Run with:
#   cmake -DHYBGEN_BUILD_DIR=... -DCONSUMER_DIR=... -DWORK_DIR=... -P cmake_consumer_test.cmake
include(${CMAKE_CURRENT_LIST_DIR}/run_step.cmake)

file(REMOVE_RECURSE "${WORK_DIR}")
run_step("install hybgen" ${CMAKE_COMMAND} --install "${HYBGEN_BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
run_step("configure consumer" ${CMAKE_COMMAND} -S "${CONSUMER_DIR}" -B "${WORK_DIR}/build"
         "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix" -DCMAKE_BUILD_TYPE=Release)
run_step("build consumer" ${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run_step("run consumer" "${WORK_DIR}/build/consumer")
message(STATUS "${step_output}")
if(NOT step_output MATCHES "OK: max difference" OR NOT step_output MATCHES "external prob")
  message(FATAL_ERROR "consumer output lacks the OK line or the run with external weights")
endif()
