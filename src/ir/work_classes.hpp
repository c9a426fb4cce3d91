#pragma once
/// \file
/// Nodes that do the same work: equal in everything but where they sit in
/// the network (name, layer, stacked cell index, time step, weight set,
/// forward link), though whether a cell's step carries state counts. An
/// op's cost and signature read only its node's work (OpDef::cost and
/// OpDef::signature see kind, attributes, shapes, parameter count, FLOPs,
/// bytes and `step > 0`), so one price serves every op of a class on the
/// same slice: bench_sim's 8-layer LSTM unrolled over 8448 steps has 76,034
/// nodes in 6 classes (found in 5 ms, once per graph). The simulator prices
/// by class (op_cost_model.hpp), so that a million-op plan does not read
/// each node from memory to learn that it costs what the one before did.

#include <cstddef>
#include <vector>

namespace splitscope {

class Graph;

struct WorkClasses {
  std::vector<int> of_node;  ///< by node id: its class, in [0, count)
  int count = 0;             ///< classes, numbered by their first node
};

/// The classes of `graph`'s nodes. Graph::work_classes() keeps them.
WorkClasses work_classes(const Graph& graph);

}  // namespace splitscope
