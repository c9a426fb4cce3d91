#pragma once
// Plans built by hand, op by op, the way plan.hpp says a partitioner builds
// them: for pinning down the executor's semantics without a partitioner.

#include <memory>
#include <vector>

#include "plan/plan.hpp"

namespace splitscope::testing_support {

class HandPlan {
 public:
  HandPlan(std::shared_ptr<const Graph> graph, std::string strategy, int devices, int microbatches = 1);

  /// A network-input value of input node `node` (filled by the executor).
  int input(NodeId node, int device, Range batch, int microbatch = 0);
  /// Computes `slice` of `node` on `device` reading `inputs` (one per slot,
  /// -1 for none); returns the output value ids. Appends to the device's schedule.
  std::vector<int> compute(NodeId node, int device, const Slice& slice, std::vector<int> inputs, int microbatch = 0);
  /// Copies `value` to `device`; returns the copy.
  int transfer(int value, int device);
  /// All-gather (one result per participant) or concat (one, on `root`).
  std::vector<int> gather(const std::vector<int>& values, bool to_all, int root = 0);
  /// All-reduce of partial sums: one result (pre-activation) per participant.
  std::vector<int> all_reduce(const std::vector<int>& partials);
  /// The activation of an all-reduced sum, on its device.
  int epilogue(int value);
  void set_outputs(std::vector<int> values) { plan_.outputs = std::move(values); }

  /// The finished plan, with each device's memory filled in.
  Plan plan() const;

 private:
  int add_value(int device, NodeId node, int output, int microbatch, Range batch, Range channels, int producer);
  int add_op(PlanOp op);

  Plan plan_;
};

/// The whole graph on device 0, node by node in topological order.
Plan single_plan(std::shared_ptr<const Graph> graph);

}  // namespace splitscope::testing_support
