#include "partitioners/graph_branches.hpp"

#include <algorithm>
#include <boost/pending/disjoint_sets.hpp>
#include <stdexcept>

namespace splitscope {

int GraphBranches::widest() const {
  size_t most = 1;
  for (const GraphFork& fork : forks) most = std::max(most, fork.branches.size());
  return static_cast<int>(most);
}

GraphBranches graph_branches(const Graph& graph) {
  GraphBranches result;
  result.units = stage_units(graph);
  const size_t unit_count = result.units.size();

  // Positions in a dependency order: network inputs first (each its own
  // position), then the units in network order (stage_units' order is the
  // layers' dependency order).
  std::vector<int> position_of(graph.num_nodes(), -1);
  int inputs = 0;
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    const OpNode& node = graph.node(id);
    if (node.kind == OpKind::kInput && !node.attrs.target) position_of[id] = inputs++;
  }
  std::vector<size_t> unit_of(graph.num_nodes(), unit_count);
  for (size_t u = 0; u < unit_count; ++u) {
    for (NodeId id : result.units[u].nodes) {
      unit_of[id] = u;
      if (graph.node(id).pass == Pass::kForward) position_of[id] = inputs + static_cast<int>(u);
    }
  }

  // Edges between positions of the forward graph; an edge (a, b) covers the
  // positions strictly between a and b (a difference array over positions).
  const size_t positions = static_cast<size_t>(inputs) + unit_count;
  std::vector<int> covered(positions + 1, 0);
  std::vector<std::pair<int, int>> edges;
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    if (position_of[id] < 0 || graph.node(id).kind == OpKind::kInput) continue;
    for (const auto& input : graph.inputs(id)) {
      if (!input) continue;
      const int from = position_of[input->node], to = position_of[id];
      if (from < 0 || from == to) continue;
      if (from > to) throw std::logic_error("graph_branches: layer order is not a dependency order at " + graph.node(id).name);
      edges.emplace_back(from, to);
      if (to - from > 1) {
        covered[static_cast<size_t>(from + 1)] += 1;
        covered[static_cast<size_t>(to)] -= 1;
      }
    }
  }
  result.on_trunk.assign(unit_count, false);
  int running = 0;
  for (size_t p = 0; p < positions; ++p) {
    running += covered[p];
    if (p >= static_cast<size_t>(inputs)) result.on_trunk[p - static_cast<size_t>(inputs)] = running == 0;
  }

  // Branches: units off the trunk joined by an edge. Such an edge never
  // crosses a trunk unit, so each branch lies within one fork.
  boost::disjoint_sets_with_storage<> components(unit_count);
  for (const auto& [from, to] : edges) {
    if (from < inputs) continue;  // each device loads the network's inputs itself
    const size_t a = static_cast<size_t>(from - inputs), b = static_cast<size_t>(to - inputs);
    if (!result.on_trunk[a] && !result.on_trunk[b]) components.union_set(a, b);
  }
  result.fork_of.assign(unit_count, -1);
  std::vector<int> branch_of(unit_count, -1);
  for (size_t u = 0; u < unit_count; ++u) {
    if (result.on_trunk[u]) continue;
    const bool opens_fork = u == 0 || result.on_trunk[u - 1];
    if (opens_fork) result.forks.emplace_back();
    GraphFork& fork = result.forks.back();
    result.fork_of[u] = static_cast<int>(result.forks.size() - 1);
    const size_t root = components.find_set(u);
    if (branch_of[root] < 0) {
      branch_of[root] = static_cast<int>(fork.branches.size());
      fork.branches.emplace_back();
    }
    fork.branches[static_cast<size_t>(branch_of[root])].push_back(u);
  }
  return result;
}

}  // namespace splitscope
