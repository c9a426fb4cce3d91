#pragma once
// Builds small Plans by hand (Plan, Value and PlanOp filled as plan.hpp
// says), so that tests pin the simulator's semantics down without a
// partitioner: every op's FLOPs and every value's bytes are chosen by the
// test, so its expected times can be worked out by hand.

#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "sim/machine/machine.hpp"

namespace splitscope::testing {

class HandPlan {
 public:
  /// A plan over `devices` devices of the graph lowered from `network_json`.
  HandPlan(const std::string& network_json, int devices, std::string strategy = "hand");

  const Graph& graph() const { return *plan_.graph; }
  /// The node called `name` ("fc1", "lstm/l0/t3", ...).
  NodeId node(const std::string& name) const;

  /// A network input: output 0 of `node`, on `device`, existing at time 0.
  int input(NodeId node, int device, int64_t bytes);
  /// A compute op of the whole of `node` on `device`, appended to the
  /// device's schedule; `flops` and `bytes` (read + written) are what it is
  /// priced by. Returns its first output value (every output gets
  /// `out_bytes`).
  int compute(NodeId node, int device, std::vector<int> inputs, int64_t flops, int64_t out_bytes,
              int microbatch = 0, int64_t bytes = 0);
  /// An epilogue (activation of an all-reduced sum) of `value` on its device.
  int epilogue(int value, int64_t bytes);
  /// Copies `value` to `device`; returns the copy.
  int transfer(int value, int device);
  /// A collective over the devices of `inputs` (in ring order); returns its
  /// outputs (one per participant; concat: one, on `root`).
  std::vector<int> collective(CollectiveKind kind, const std::vector<int>& inputs, int root = -1);

  void set_memory_peak(int device, int64_t bytes);
  PlanOp& op(int id) { return plan_.ops.at(static_cast<size_t>(id)); }
  const Plan& plan() const { return plan_; }
  int last_op() const { return static_cast<int>(plan_.ops.size()) - 1; }

 private:
  int add_value(int device, NodeId node, int output, int microbatch, int producer, int64_t bytes);
  PlanOp& add_op(OpRole role, NodeId node, int device);

  Plan plan_;
};

/// A machine of `devices` devices joined by `topology`, each with `tflops`
/// TFLOP/s of fp32, 1000 GB/s of memory, 80 GiB and `launch_us` of launch
/// overhead, at efficiency 1.
Machine test_machine(int devices, const TopologySpec& topology, double tflops = 1.0,
                     double launch_us = 0.0);

TopologySpec switch_topology(double gbps, double latency_us);
TopologySpec host_staged_topology(int devices_per_bus, double gbps, double latency_us);
TopologySpec multi_node_topology(int devices_per_node, int nics_per_node, double link_gbps,
                                 double nic_gbps);
/// Links so fast that transfers take no time to speak of (1e12 GB/s, no latency).
TopologySpec free_links();

}  // namespace splitscope::testing
