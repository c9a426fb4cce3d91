#pragma once
/// \file
/// Zoo networks and machines for the search tests.

#include <algorithm>
#include <memory>
#include <string>

#include "ir/graph.hpp"
#include "search/search_problem.hpp"

namespace splitscope::testing {

/// A zoo network, lowered; its training graph (SGD with momentum) with `train`.
std::shared_ptr<const Graph> zoo_network(const std::string& name, bool train);

/// A chain of ten dense layers of uneven widths (512 to 4096), batch 256: big
/// enough that pipelines and replicated splits beat the named strategies,
/// uneven enough that where the stages are cut matters.
std::shared_ptr<const Graph> uneven_chain(bool train);

/// `graph` over `devices` of `machine`, the memory limit the machine's, no budget to speak of.
SearchProblem search_problem(std::shared_ptr<const Graph> graph, int devices, const std::string& machine);

/// `network` (a zoo name, or "uneven" for uneven_chain()) over `devices` of `machine`, the memory limit the machine's, no budget to speak of.
SearchProblem search_problem(const std::string& network, bool train, int devices,
                             const std::string& machine = "h100-nvlink-8");

}  // namespace splitscope::testing
