#pragma once
/// \file
/// Internal invariants. A failed check is a bug in splitscope, not bad input:
/// it throws std::logic_error naming the condition and file:line, so that the
/// CLI reports it (exit 1) instead of crashing.

#include <stdexcept>
#include <string>

namespace splitscope::detail {

[[noreturn]] void check_failed(const char* condition, const char* file, int line,
                               const std::string& message);

}  // namespace splitscope::detail

/// Asserts an internal invariant in every build type.
#define SPLITSCOPE_CHECK(condition, message)                                         \
  do {                                                                               \
    if (!(condition)) {                                                              \
      ::splitscope::detail::check_failed(#condition, __FILE__, __LINE__, (message)); \
    }                                                                                \
  } while (false)
