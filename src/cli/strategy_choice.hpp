#pragma once
/// \file
/// Which strategies a comparison runs, and how many micro-batches a pipeline
/// gets by default: `compare` and `validate` choose alike, so that a
/// validation scores the very runs a comparison makes.

#include <string>
#include <vector>

#include "ir/graph.hpp"

namespace splitscope::cli {

/// The strategies to run on `devices`: `asked` (checked, each once), or every
/// one that applies to `graph` when `asked` is empty; the baseline (`single`)
/// always, first, since every speedup is against it. InputError (naming
/// `option`) for an unknown strategy, or when no split applies at all.
std::vector<std::string> chosen_strategies(const std::vector<std::string>& asked, int devices, const Graph& graph,
                                           const std::string& option = "--strategies");

/// GPipe's rule of thumb, M >= 4N, but no micro-batch under 8 rows.
int default_microbatches(const Graph& graph, int devices);

}  // namespace splitscope::cli
