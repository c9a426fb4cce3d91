#include "partitioners/stage_units.hpp"

#include <map>

#include "partitioners/contiguous_split.hpp"
#include "util/errors.hpp"

namespace splitscope {

std::vector<StageUnit> stage_units(const Graph& graph) {
  std::map<std::pair<int, int>, StageUnit> units;
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    const OpNode& node = graph.node(id);
    if (node.kind == OpKind::kInput) continue;
    const bool recurrent = node.recurrent_layer;
    const std::pair<int, int> key{node.layer, recurrent ? node.sublayer : 0};
    StageUnit& unit = units[key];
    if (unit.name.empty()) {
      unit.name = recurrent && node.stacked > 1 ? node.layer_name + "/l" + std::to_string(node.sublayer)
                                                : node.layer_name;
    }
    unit.nodes.push_back(id);
  }
  std::vector<StageUnit> ordered;
  for (auto& [key, unit] : units) ordered.push_back(std::move(unit));
  return ordered;
}

std::vector<int> balanced_stage_starts(const Graph& graph, int devices, const CostFunction& cost,
                                       const std::string& strategy) {
  const std::vector<StageUnit> units = stage_units(graph);
  if (devices > static_cast<int>(units.size())) {
    throw InputError("--devices", "",
                     strategy + " can use at most " + std::to_string(units.size()) + " devices on " +
                         graph.name() + ": it has " + std::to_string(units.size()) +
                         " layers to place (each stacked recurrent layer counts once)");
  }
  std::vector<double> costs;
  for (const StageUnit& unit : units) {
    double total = 0.0;
    for (NodeId id : unit.nodes) total += cost.seconds(graph, id, full_slice(graph.node(id), {0, graph.batch()}));
    costs.push_back(total);
  }
  const auto starts = balanced_contiguous_split(costs, static_cast<size_t>(devices));
  return {starts.begin(), starts.end()};
}

namespace {

/// InputError unless `starts` cuts `units` units into `devices` non-empty stages.
void require_stage_starts(const std::vector<int>& starts, int devices, size_t units, const Graph& graph) {
  const auto cuts = [&] {
    std::string text;
    for (int start : starts) text += (text.empty() ? "" : ",") + std::to_string(start);
    return text;
  };
  if (static_cast<int>(starts.size()) != devices) {
    throw InputError("--stages", cuts(),
                     "gives " + std::to_string(starts.size()) + " stage(s) for " + std::to_string(devices) +
                         " devices per replica; give the first layer of each stage, one per device, from 0");
  }
  for (size_t i = 0; i < starts.size(); ++i) {
    const bool rising = i == 0 ? starts[i] == 0 : starts[i] > starts[i - 1];
    if (!rising || starts[i] >= static_cast<int>(units)) {
      throw InputError("--stages", cuts(),
                       "must start at 0 and rise strictly, each below " + std::to_string(units) + " (the layers of " +
                           graph.name() + ", each stacked recurrent layer once)");
    }
  }
}

}  // namespace

std::vector<int> assign_stages(const Graph& graph, int devices, const CostFunction& cost,
                               const std::string& strategy, const std::vector<int>& starts) {
  const std::vector<StageUnit> units = stage_units(graph);
  std::vector<int> chosen = starts;
  if (chosen.empty()) {
    chosen = balanced_stage_starts(graph, devices, cost, strategy);
  } else {
    require_stage_starts(chosen, devices, units.size(), graph);
  }
  std::vector<int> device_of(graph.num_nodes(), 0);
  for (size_t part = 0; part < chosen.size(); ++part) {
    const size_t end = part + 1 < chosen.size() ? static_cast<size_t>(chosen[part + 1]) : units.size();
    for (size_t u = static_cast<size_t>(chosen[part]); u < end; ++u) {
      for (NodeId id : units[u].nodes) device_of[id] = static_cast<int>(part);
    }
  }
  return device_of;
}

std::vector<int> plan_stage_starts(const Plan& plan, int devices_each, int stage_devices) {
  const std::vector<StageUnit> units = stage_units(*plan.graph);
  std::vector<int> device_of_node(plan.graph->num_nodes(), -1);
  // A node's stage is that of the lowest device it runs on: a stage's tensor
  // group starts at its first device, and an op placed whole there.
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kCompute || op.device >= devices_each) continue;
    int& device = device_of_node[static_cast<size_t>(op.node)];
    const int stage = op.device / stage_devices;
    if (device < 0 || stage < device) device = stage;
  }
  std::vector<int> starts;
  int previous = -1;
  for (size_t u = 0; u < units.size(); ++u) {
    const int device = device_of_node[static_cast<size_t>(units[u].nodes.front())];
    if (device != previous) starts.push_back(static_cast<int>(u));
    previous = device;
  }
  return starts;
}

}  // namespace splitscope
