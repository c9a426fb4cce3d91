#pragma once
/// \file
/// What every fuzz target shares: the libFuzzer entry point's signature, and
/// the rule for exceptions. A parser may refuse any input, but only with an
/// InputError (the CLI's exit 2); any other exception is a message without a
/// file and field, and SPLITSCOPE_FUZZ_STRICT=1 makes it a crash so that the
/// fuzzer keeps the input. Without it (the corpus replays, the long runs)
/// such exceptions are tolerated: they are exit 1, not a crash.
/// SPLITSCOPE_FUZZ_ALLOW=TEXT tolerates, even in strict mode, exceptions
/// whose message holds TEXT (one known problem, to look past it).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "util/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace splitscope::fuzz {

inline bool strict() {
  static const bool value = [] {
    const char* env = std::getenv("SPLITSCOPE_FUZZ_STRICT");
    return env != nullptr && std::string_view(env) == "1";
  }();
  return value;
}

/// A broken invariant (a file the program wrote that it cannot read back):
/// always a crash, with the reason on stderr.
[[noreturn]] inline void invariant_failed(const char* what, const std::exception* cause = nullptr) {
  std::fprintf(stderr, "fuzz invariant failed: %s%s%s\n", what, cause ? ": " : "", cause ? cause->what() : "");
  std::abort();
}

/// Runs `body`; an InputError is an accepted refusal, other exceptions see strict().
template <class Body>
void refusals_are_input_errors(Body&& body) {
  try {
    body();
  } catch (const InputError&) {
  } catch (const std::exception& e) {
    static const char* allowed = std::getenv("SPLITSCOPE_FUZZ_ALLOW");
    if (strict() && (allowed == nullptr || std::string_view(e.what()).find(allowed) == std::string_view::npos)) {
      std::fprintf(stderr, "fuzz: not an InputError: %s\n", e.what());
      std::abort();
    }
  }
}

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace splitscope::fuzz
