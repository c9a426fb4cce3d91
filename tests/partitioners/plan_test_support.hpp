#pragma once
// Small helpers shared by the partitioner tests.

#include <memory>
#include <string>

#include "partitioners/partitioner.hpp"

namespace splitscope::testing {

/// A lowered network from JSON text.
std::shared_ptr<const Graph> graph_from_text(const std::string& text);
/// A lowered zoo network.
std::shared_ptr<const Graph> zoo_graph(const std::string& name);
/// The training graph (SGD) of a zoo network at batch `batch`.
std::shared_ptr<const Graph> zoo_training_graph(const std::string& name, int64_t batch);
/// The plan of `strategy` over `devices` (and `microbatches`).
Plan make_plan(const std::shared_ptr<const Graph>& graph, const std::string& strategy, int devices,
               int microbatches = 1);
/// Counts of the plan's ops by role / collective kind.
int count_ops(const Plan& plan, OpRole role);
int count_collectives(const Plan& plan, CollectiveKind kind);

}  // namespace splitscope::testing
