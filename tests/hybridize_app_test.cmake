# Installs the built hybgen into a scratch prefix, then configures, builds and
# runs examples/hybridize-app against it with find_package(hybgen COMPONENTS
# runtime): a user's own project writes the seed MLP as a block, runs it
# eagerly, hybridizes it (the compiled code cached under WORK_DIR) and exports
# it. Run with:
#   cmake -DHYBGEN_BUILD_DIR=... -DAPP_DIR=... -DWORK_DIR=... [-DAPP_CXX_COMPILER=...] [-DAPP_CXX_FLAGS=...]
#         -P hybridize_app_test.cmake
include(${CMAKE_CURRENT_LIST_DIR}/run_step.cmake)

file(REMOVE_RECURSE "${WORK_DIR}")
run_step("install hybgen" ${CMAKE_COMMAND} --install "${HYBGEN_BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
set(configure_args "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix" -DCMAKE_BUILD_TYPE=Release)
if(APP_CXX_COMPILER)
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER=${APP_CXX_COMPILER}")
endif()
if(APP_CXX_FLAGS)  # a sanitizer build's flags: its library needs their runtimes in the program
  list(APPEND configure_args "-DCMAKE_CXX_FLAGS=${APP_CXX_FLAGS}")
endif()
run_step("configure app" ${CMAKE_COMMAND} -S "${APP_DIR}" -B "${WORK_DIR}/build" ${configure_args})
run_step("build app" ${CMAKE_COMMAND} --build "${WORK_DIR}/build")

# Everything the run writes stays in WORK_DIR: the hybridize cache and the export.
set(ENV{HYBGEN_CACHE_DIR} "${WORK_DIR}/cache")
file(MAKE_DIRECTORY "${WORK_DIR}/out")
run_step("run app" "${WORK_DIR}/build/hybridize_app" "${WORK_DIR}/out")
message(STATUS "${step_output}")
if(NOT step_output MATCHES "OK: seed MLP hybridized == eager")
  message(FATAL_ERROR "hybridize_app output lacks the OK line")
endif()
# hybridize() compiled the graph (the system compiler is there: it just built
# the app) into the cache, unless the environment turned that off.
file(GLOB_RECURSE compiled "${WORK_DIR}/cache/*.so")
if(NOT "$ENV{HYBGEN_JIT}" STREQUAL "0" AND NOT compiled)
  message(FATAL_ERROR "hybridize() left no compiled library in HYBGEN_CACHE_DIR=${WORK_DIR}/cache")
endif()
foreach(file seed_mlp.json seed_mlp.safetensors)
  if(NOT EXISTS "${WORK_DIR}/out/${file}")
    message(FATAL_ERROR "hybridize_app did not write ${WORK_DIR}/out/${file}")
  endif()
endforeach()
