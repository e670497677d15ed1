// EXPECT_ERROR(statement, "text"): the statement throws hybgen::Error whose
// message contains the text (the message is printed when it does not).
#pragma once

#include <functional>
#include <string>

#include "ir/error.h"

namespace hybgen::testing {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace hybgen::testing

#define EXPECT_ERROR(statement, text)                                                \
  do {                                                                               \
    const std::string message_ = ::hybgen::testing::error_of([&] { statement; });   \
    EXPECT_NE(message_.find(text), std::string::npos) << message_;                   \
  } while (0)
