#pragma once
// Members of the ensembles the tests run (ensemble_test.cpp on the cpu
// backend, ensemble_simulation_test.cpp on the simulator).

#include <memory>
#include <string>

#include "exec/ensemble_run.hpp"
#include "naive_reference.hpp"
#include "partitioners/partitioner.hpp"

namespace splitscope::testing_support {

/// A dense net on [6] answering [3], batch 2, its width `hidden`: members that differ but can be averaged.
inline std::shared_ptr<const Graph> member_graph(int hidden) {
  return graph_from_json(R"({"name": "m)" + std::to_string(hidden) + R"(", "batch": 2, "input": [6], "layers": [
      {"type": "dense", "units": )" + std::to_string(hidden) + R"(, "activation": "tanh"},
      {"type": "dense", "units": 3}]})");
}

inline EnsembleMember member(const std::shared_ptr<const Graph>& graph, int device, double delay_ms = 0) {
  EnsembleMember m;
  m.network = graph->name();
  m.plan = make_partitioner("single")->partition(graph, {1, 1, nullptr});
  m.device = device;
  m.delay_ms = delay_ms;
  return m;
}

/// One timed run, no warm-up, one intra-op thread.
inline RunOptions quick_run() {
  RunOptions options;
  options.warmup = 0;
  options.repeats = 1;
  options.seed = 3;
  options.intra_op_threads = 1;
  return options;
}

}  // namespace splitscope::testing_support
