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
#include "plan/plan.hpp"

namespace splitscope {

struct StageUnit {
  std::string name;            ///< "fc1", "lstm/l2"
  std::vector<NodeId> nodes;   ///< its ops (network inputs belong to none)
};

/// The units of `graph`, in network order.
std::vector<StageUnit> stage_units(const Graph& graph);

/// The first unit of each of `devices` stages in the best contiguous split
/// of the units, balanced by `cost`. InputError if there are fewer units than devices.
std::vector<int> balanced_stage_starts(const Graph& graph, int devices, const CostFunction& cost,
                                       const std::string& strategy);

/// The device of every node for a contiguous split of the units over
/// `devices` devices: at `starts` (the first unit of each stage; InputError
/// unless there is one per device, 0 first, strictly rising, below the unit
/// count), or balanced by `cost` when `starts` is empty (inputs get the
/// device of the first unit).
std::vector<int> assign_stages(const Graph& graph, int devices, const CostFunction& cost,
                               const std::string& strategy, const std::vector<int>& starts = {});

/// The first unit of each stage of a layer-split plan of `devices_each`
/// devices per replica, read off where its ops run (the first replica's
/// devices; a stage is `stage_devices` consecutive devices, as hybrid's
/// tensor groups): what `stage_starts` rebuilds it with.
std::vector<int> plan_stage_starts(const Plan& plan, int devices_each, int stage_devices = 1);

}  // namespace splitscope
