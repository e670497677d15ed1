# run_step(WHAT COMMAND...): runs one step of a CMake-script test (-P) and
# stops the test with the step's output when it fails; a step's stdout and
# stderr land in `step_output` for the caller to check. A step that runs past
# 600 s fails.
function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 600)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok")
  set(step_output "${out}${err}" PARENT_SCOPE)
endfunction()
