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

std::vector<int> assign_stages(const Graph& graph, int devices, const CostFunction& cost,
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
  std::vector<int> device_of(graph.num_nodes(), 0);
  for (size_t part = 0; part < starts.size(); ++part) {
    const size_t end = part + 1 < starts.size() ? starts[part + 1] : units.size();
    for (size_t u = starts[part]; u < end; ++u) {
      for (NodeId id : units[u].nodes) device_of[id] = static_cast<int>(part);
    }
  }
  return device_of;
}

}  // namespace splitscope
