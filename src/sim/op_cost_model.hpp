#pragma once
/// \file
/// What an op costs on a machine's device:
///
///   time = max(FLOPs / peak, bytes / memory bandwidth) / efficiency(kind) + launch overhead
///
/// with the matrix products at the peak of the device's `matrix_math`,
/// efficiency the fraction of that roofline the op kind reaches, and bytes
/// read + written. An op that does nothing (zero FLOPs and zero bytes, like a
/// flatten of a contiguous tensor) costs nothing, not even a launch. A
/// measured time from the machine's calibration table, looked up by
/// op_signature(), replaces the whole formula for the ops it covers.

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/graph.hpp"
#include "ir/slice.hpp"
#include "partitioners/plan.hpp"
#include "sim/machine.hpp"

namespace splitscope {

class OpCostModel {
 public:
  explicit OpCostModel(const Machine& machine);

  /// Seconds for a compute or epilogue op of `plan` on one device; sets
  /// `*calibrated` (when given) to whether the time came from the table.
  double op_seconds(const Plan& plan, const PlanOp& op, bool* calibrated = nullptr) const;
  /// The same, given the kind of the op's graph node (`node_kind`), which
  /// spares a large simulation a look-up in the graph per op.
  double op_seconds(const Plan& plan, const PlanOp& op, OpKind node_kind, bool* calibrated = nullptr) const;
  /// Seconds for `slice` of `node` (what a partitioner asks when balancing).
  double slice_seconds(const Graph& graph, NodeId node, const Slice& slice) const;
  /// The roofline formula alone, for an op of efficiency kind `kind`.
  double roofline_seconds(std::string_view kind, int64_t flops, int64_t bytes) const;
  /// The calibrated time of a signature, in seconds, if the table has it.
  const double* calibrated_seconds(const std::string& signature) const;

  bool has_calibration() const { return !calibrated_.empty(); }

 private:
  double roofline(int64_t flops, int64_t bytes, double efficiency) const;
  double kind_seconds(OpKind kind, int64_t flops, int64_t bytes) const;

  double flops_per_second_;
  double bytes_per_second_;
  double launch_seconds_;
  const DeviceSpec device_;
  std::vector<double> kind_efficiency_;  ///< by OpKind value
  double epilogue_efficiency_;
  std::unordered_map<std::string, double> calibrated_;
};

}  // namespace splitscope
