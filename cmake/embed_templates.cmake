# Turns the files under templates/ into a C++ source holding their text, so
# the hybgen binary carries its templates. Run as a script:
#   cmake -DTEMPLATE_DIR=... -DOUTPUT=... -P embed_templates.cmake
# Each file becomes an entry named by its path under templates/ without the
# .in / .inc extension ("model.h", "kernels/dense").
# Tests only: -DPATCH_TEMPLATE=kernels/math.inc -DPATCH_FROM=... -DPATCH_TO=...
# replaces text in one file (an error when the text is not there), so a test
# can build the tool with a deliberately wrong template.
file(GLOB_RECURSE template_files RELATIVE "${TEMPLATE_DIR}" "${TEMPLATE_DIR}/*.in" "${TEMPLATE_DIR}/*.inc")
list(SORT template_files)
set(body "")
foreach(rel IN LISTS template_files)
  file(READ "${TEMPLATE_DIR}/${rel}" text)
  if(DEFINED PATCH_TEMPLATE AND rel STREQUAL PATCH_TEMPLATE)
    string(FIND "${text}" "${PATCH_FROM}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${rel} no longer contains '${PATCH_FROM}', the text the test replaces")
    endif()
    string(REPLACE "${PATCH_FROM}" "${PATCH_TO}" text "${text}")
    set(patched TRUE)
  endif()
  string(REGEX REPLACE "\\.(in|inc)$" "" key "${rel}")
  if(text MATCHES "\\)hgtpl\"")
    message(FATAL_ERROR "${rel} contains the raw-string delimiter )hgtpl\"")
  endif()
  string(APPEND body "    {\"${key}\", R\"hgtpl(${text})hgtpl\"},\n")
endforeach()
if(DEFINED PATCH_TEMPLATE AND NOT patched)
  message(FATAL_ERROR "no template ${PATCH_TEMPLATE} to patch")
endif()
set(content "// Generated from templates/ by cmake/embed_templates.cmake; do not edit.
#include <map>
#include <string>

namespace hybgen {
const std::map<std::string, std::string>& embedded_templates() {
  static const std::map<std::string, std::string> templates = {
${body}  };
  return templates;
}
}  // namespace hybgen
")
# Rewrite only on change so dependent objects are not rebuilt needlessly.
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
  if(old STREQUAL content)
    return()
  endif()
endif()
file(WRITE "${OUTPUT}" "${content}")
