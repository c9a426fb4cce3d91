#pragma once
/// \file
/// MODEL arguments: a path or a zoo name -> a lowered Graph.

#include <memory>
#include <optional>
#include <string>

#include "ir/graph.hpp"

namespace splitscope::cli {

/// Resolves, parses, validates and lowers a network; `batch` overrides the file's.
std::shared_ptr<const Graph> load_network(const std::string& name_or_path,
                                          std::optional<int64_t> batch = std::nullopt);

}  // namespace splitscope::cli
