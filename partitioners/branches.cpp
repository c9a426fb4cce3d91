// `branches`: the independent branches of each fork of the graph (towers,
// inception paths) on different devices, balanced by cost, and each trunk
// layer (a join and what follows it) on the device that already holds most of
// the data it reads, so that a join costs one transfer per branch placed
// elsewhere. A chain has no fork: there is nothing for this split to do.

#include <algorithm>
#include <fmt/format.h>
#include <numeric>

#include "partitioners/graph_branches.hpp"
#include "plan/plan_builder.hpp"
#include "partitioners/strategies.hpp"

namespace splitscope {
namespace {

/// Longest-processing-time first: the costliest branch to the least loaded
/// device, preferring `home` (where the fork's input already is) on ties, so
/// the heaviest branch stays where its data is. Returns each branch's device.
std::vector<int> balance_branches(const std::vector<double>& costs, int devices, int home,
                                  std::vector<double>& loads) {
  std::vector<size_t> order(costs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return costs[a] > costs[b]; });
  loads.assign(static_cast<size_t>(devices), 0.0);
  std::vector<int> device_of(costs.size(), home);
  for (size_t branch : order) {
    int best = home;
    for (int d = 0; d < devices; ++d) {
      if (loads[static_cast<size_t>(d)] < loads[static_cast<size_t>(best)]) best = d;
    }
    device_of[branch] = best;
    loads[static_cast<size_t>(best)] += costs[branch];
  }
  return device_of;
}

class BranchesPartitioner : public Partitioner {
 public:
  std::string_view name() const override { return "branches"; }
  std::string_view summary() const override {
    return "each fork's independent branches (towers, inception paths) on different devices, balanced by cost";
  }
  StrategyTraits traits() const override { return {.trains = true}; }
  int max_devices(const Graph& graph) const override { return graph_branches(graph).widest(); }
  /// On a network without forks it would be `single` under another name.
  bool applies(const Graph& graph, int devices) const override {
    const int widest = max_devices(graph);
    return widest >= 2 && devices >= 2 && devices <= widest;
  }

  Plan partition(std::shared_ptr<const Graph> graph, const PartitionOptions& options) const override {
    require_one_microbatch(options, "branches");
    const GraphBranches shape = graph_branches(*graph);
    const bool skips = std::any_of(shape.on_trunk.begin(), shape.on_trunk.end(), [](bool trunk) { return !trunk; });
    require_devices(options, shape.widest(), "branches",
                    shape.widest() == 1
                        ? skips ? graph->name() + " has forks, but each has one branch of layers: its skip "
                                                  "connections (a residual add's identity) hold no layer to place "
                                                  "on another device"
                                : graph->name() + " has no fork: every layer depends on the one before it"
                        : "the widest fork of " + graph->name() + " has " +
                                              std::to_string(shape.widest()) + " independent branches");
    const CostFunction& cost = cost_function(options);
    std::vector<double> unit_cost(shape.units.size(), 0.0);
    for (size_t u = 0; u < shape.units.size(); ++u) {
      for (NodeId id : shape.units[u].nodes) {
        unit_cost[u] += cost.seconds(*graph, id, full_slice(graph->node(id), {0, graph->batch()}));
      }
    }

    std::vector<int> unit_of(graph->num_nodes(), -1);
    for (size_t u = 0; u < shape.units.size(); ++u) {
      for (NodeId id : shape.units[u].nodes) unit_of[id] = static_cast<int>(u);
    }
    std::vector<int> device_of_unit(shape.units.size(), -1);
    PlanBuilder builder(graph, "branches", traits(), options.devices, 1);
    int home = 0;  // the device of the latest trunk unit
    for (size_t u = 0; u < shape.units.size(); ++u) {
      if (shape.on_trunk[u]) {
        device_of_unit[u] = where_most_data_is(*graph, shape.units[u], unit_of, device_of_unit, options.devices, home);
        home = device_of_unit[u];
        continue;
      }
      if (device_of_unit[u] >= 0) continue;  // placed with its fork
      const GraphFork& fork = shape.forks[static_cast<size_t>(shape.fork_of[u])];
      std::vector<double> costs;
      for (const auto& branch : fork.branches) {
        double total = 0.0;
        for (size_t v : branch) total += unit_cost[v];
        costs.push_back(total);
      }
      std::vector<double> loads;
      const std::vector<int> device_of_branch = balance_branches(costs, options.devices, home, loads);
      for (size_t b = 0; b < fork.branches.size(); ++b) {
        for (size_t v : fork.branches[b]) device_of_unit[v] = device_of_branch[b];
      }
      if (fork.branches.size() > 1) builder.note(describe(shape, fork, device_of_branch, loads));
    }

    std::vector<int> device_of(graph->num_nodes(), 0);
    for (NodeId id = 0; id < graph->num_nodes(); ++id) {
      if (unit_of[id] >= 0) device_of[id] = device_of_unit[static_cast<size_t>(unit_of[id])];
    }
    for (NodeId id : graph->wavefront_order()) {
      if (graph->node(id).kind == OpKind::kInput) continue;
      builder.place(id, 0, full_slice(graph->node(id), {0, graph->batch()}), device_of[id]);
    }
    return builder.build();
  }

 private:
  /// The device holding the most of what `unit`'s forward ops read from
  /// other units (counted in floats, so in proportion to bytes); `fallback`
  /// when it reads only network inputs (each device loads those itself).
  /// Ties go to the lowest device.
  static int where_most_data_is(const Graph& graph, const StageUnit& unit, const std::vector<int>& unit_of,
                                const std::vector<int>& device_of_unit, int devices, int fallback) {
    std::vector<double> floats(static_cast<size_t>(devices), 0.0);
    bool reads_any = false;
    for (NodeId id : unit.nodes) {
      if (graph.node(id).pass != Pass::kForward) continue;
      for (const auto& input : graph.inputs(id)) {
        if (!input || unit_of[input->node] < 0) continue;
        const int source = device_of_unit[static_cast<size_t>(unit_of[input->node])];
        if (source < 0) continue;
        const Shape& shape = graph.node(input->node).output_shapes.at(static_cast<size_t>(input->output));
        floats[static_cast<size_t>(source)] += static_cast<double>(element_count(shape));
        reads_any = true;
      }
    }
    if (!reads_any) return fallback;
    return static_cast<int>(std::max_element(floats.begin(), floats.end()) - floats.begin());
  }

  static std::string describe(const GraphBranches& shape, const GraphFork& fork, const std::vector<int>& device_of_branch,
                              const std::vector<double>& loads) {
    std::string text = fmt::format("fork of {} branches:", fork.branches.size());
    for (size_t b = 0; b < fork.branches.size(); ++b) {
      text += fmt::format("{} {} -> device {}", b == 0 ? "" : ",", shape.units[fork.branches[b][0]].name,
                          device_of_branch[b]);
    }
    std::string balance;
    for (double load : loads) balance += fmt::format("{}{:.3g} ms", balance.empty() ? "" : " / ", load * 1e3);
    return text + " (estimated loads " + balance + ")";
  }
};

}  // namespace

std::unique_ptr<Partitioner> make_branches_partitioner() { return std::make_unique<BranchesPartitioner>(); }

}  // namespace splitscope
