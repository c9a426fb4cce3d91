#include "cli/degrees_option.hpp"

#include "partitioners/hybrid.hpp"
#include "util/errors.hpp"

namespace splitscope::cli {

CLI::Option* add_degrees_option(CLI::App& command, std::string& text) {
  return command.add_option("--degrees", text,
                            "hybrid: T,P,D, its tensor, pipeline and data degrees (T*P*D = --devices; devices "
                            "numbered tensor innermost)");
}

std::optional<ParallelDegrees> degrees_option(const std::string& text, const std::string& strategy) {
  if (text.empty()) return std::nullopt;
  if (strategy != "hybrid") {
    throw InputError("--degrees", text, "sets the degrees of --strategy hybrid; use it with that strategy, or drop it");
  }
  return parse_degrees(text);
}

}  // namespace splitscope::cli
