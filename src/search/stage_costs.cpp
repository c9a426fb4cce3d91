#include "search/stage_costs.hpp"

#include <algorithm>

#include "partitioners/stage_units.hpp"

namespace splitscope {

StageCosts stage_costs(const Graph& graph, const CostFunction& cost, int64_t rows) {
  const std::vector<StageUnit> units = stage_units(graph);
  StageCosts costs;
  costs.rows = rows;
  std::vector<int> unit_of(graph.num_nodes(), -1);
  for (size_t u = 0; u < units.size(); ++u) {
    double seconds = 0;
    for (NodeId id : units[u].nodes) {
      unit_of[id] = static_cast<int>(u);
      seconds += cost.seconds(graph, id, full_slice(graph.node(id), {0, rows}));
    }
    costs.unit_seconds.push_back(seconds);
  }
  // A tensor crosses every cut between its producer's unit and its farthest
  // consumer's, once (a stage forwards what a later one reads).
  std::vector<double> crossing(units.empty() ? 0 : units.size() - 1, 0.0);
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    const int from = unit_of[id] < 0 ? 0 : unit_of[id];
    const OpNode& node = graph.node(id);
    for (int output = 0; output < static_cast<int>(node.output_shapes.size()); ++output) {
      int low = from;
      int high = from;
      for (const auto& [consumer, slot] : graph.consumers({id, output})) {
        const int to = unit_of[consumer];
        if (to < 0) continue;
        low = std::min(low, to);
        high = std::max(high, to);
      }
      const double bytes = static_cast<double>(tensor_bytes(node.output_shapes[static_cast<size_t>(output)], 1));
      for (int cut = low; cut < high; ++cut) crossing[static_cast<size_t>(cut)] += bytes;
    }
  }
  costs.cut_bytes_per_row = std::move(crossing);
  return costs;
}

}  // namespace splitscope
