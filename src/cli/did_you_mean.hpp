#pragma once
/// \file
/// "Did you mean --devices?": the known name nearest a mistyped one, for the
/// messages of an unknown option or a swept option run does not have.

#include <optional>
#include <string>
#include <vector>

namespace splitscope::cli {

/// The name in `known` nearest `word` (fewest single-character edits, or
/// `word` a prefix of it), or nullopt where none is near enough to be a
/// likely typo (more than a third of the word's characters away).
std::optional<std::string> nearest_name(const std::string& word, const std::vector<std::string>& known);

}  // namespace splitscope::cli
