#pragma once
// What the CUDA tests hold a run to: the one test oracle (tests/common/
// naive_reference.hpp, every op kind by its definition in double precision,
// sharing no code with the plan compiler or any backend), and the plans and
// error measure they use.

#include <cstdint>
#include <memory>
#include <string>

#include "exec/executor.hpp"
#include "ir/graph.hpp"
#include "plan/plan.hpp"

namespace splitscope::testing {

/// The network's output [B, ...] for weights and inputs from `seed`.
HostTensor reference_output(const Graph& graph, uint64_t seed);

/// A lowered network from JSON text, and a lowered zoo network.
std::shared_ptr<const Graph> graph_from_text(const std::string& text);
std::shared_ptr<const Graph> zoo_graph(const std::string& name);

/// The plan of `strategy` over `devices` (and `microbatches`), checked.
Plan make_plan(const std::shared_ptr<const Graph>& graph, const std::string& strategy, int devices,
               int microbatches = 1);

/// max |a - b| / max |reference|, as the cpu backend's --check measures it.
double relative_error(const HostTensor& result, const HostTensor& reference);

}  // namespace splitscope::testing
