#pragma once
/// \file
/// What a layer split may not cut: one unit per layer, except that a stacked
/// recurrent layer gives one unit per stacked cell layer (all its time steps).
/// The layer split (horizontal, pipeline) assigns contiguous runs of units to
/// devices; in an unrolled RNN this yields the time-step wavefront.

#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "partitioners/cost_function.hpp"

namespace splitscope {

struct StageUnit {
  std::string name;            ///< "fc1", "lstm/l2"
  std::vector<NodeId> nodes;   ///< its ops (network inputs belong to none)
};

/// The units of `graph`, in network order.
std::vector<StageUnit> stage_units(const Graph& graph);

/// The device of every node for the best contiguous split of the units over
/// `devices` devices, balanced by `cost` (inputs get the device of the first unit).
std::vector<int> assign_stages(const Graph& graph, int devices, const CostFunction& cost,
                               const std::string& strategy);

}  // namespace splitscope
