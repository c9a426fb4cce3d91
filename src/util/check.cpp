#include "util/check.hpp"

namespace splitscope::detail {

void check_failed(const char* condition, const char* file, int line,
                  const std::string& message) {
  throw std::logic_error(std::string("internal error: check failed: ") + condition + " at " +
                         file + ":" + std::to_string(line) +
                         (message.empty() ? "" : ": " + message));
}

}  // namespace splitscope::detail
