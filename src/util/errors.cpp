#include "util/errors.hpp"

namespace splitscope {
namespace {

std::string join_message(const std::string& source, const std::string& field,
                         const std::string& problem) {
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on `s + ": " + t` at -O3.
  std::string message;
  message.reserve(source.size() + field.size() + problem.size() + 4);
  message.append(source);
  if (!field.empty()) message.append(": ").append(field);
  message.append(": ").append(problem);
  return message;
}

}  // namespace

InputError::InputError(std::string source, std::string field, std::string problem)
    : std::runtime_error(join_message(source, field, problem)),
      source_(std::move(source)),
      field_(std::move(field)),
      problem_(std::move(problem)) {}

}  // namespace splitscope
