#include "sim/op_cost_model.hpp"

#include <algorithm>

#include "ir/op_signature.hpp"
#include "util/check.hpp"

namespace splitscope {

OpCostModel::OpCostModel(const Machine& machine)
    : flops_per_second_(machine.device.matrix_flops_per_second()),
      bytes_per_second_(machine.device.memory_bytes_per_second()),
      launch_seconds_(machine.device.launch_overhead_seconds()),
      device_(machine.device),
      epilogue_efficiency_(machine.device.efficiency_of(kEpilogueEfficiency)) {
  SPLITSCOPE_CHECK(flops_per_second_ > 0 && bytes_per_second_ > 0, "a device needs positive peaks");
  // One row per op definition, so a kind added to the table is priced too.
  for (const OpDef* def : op_defs()) kind_efficiency_.push_back(machine.device.efficiency_of(def->name));
  for (const auto& [signature, us] : machine.calibration.op_times_us) {
    calibrated_.emplace(signature, us * 1e-6);
  }
}

double OpCostModel::roofline(int64_t flops, int64_t bytes, double efficiency) const {
  if (flops == 0 && bytes == 0) return 0.0;
  const double compute = static_cast<double>(flops) / flops_per_second_;
  const double memory = static_cast<double>(bytes) / bytes_per_second_;
  return std::max(compute, memory) / efficiency + launch_seconds_;
}

double OpCostModel::roofline_seconds(std::string_view kind, int64_t flops, int64_t bytes) const {
  return roofline(flops, bytes, device_.efficiency_of(kind));
}

double OpCostModel::kind_seconds(OpKind kind, int64_t flops, int64_t bytes) const {
  return roofline(flops, bytes, kind_efficiency_[static_cast<size_t>(kind)]);
}

const double* OpCostModel::calibrated_seconds(const std::string& signature) const {
  const auto it = calibrated_.find(signature);
  return it == calibrated_.end() ? nullptr : &it->second;
}

double OpCostModel::op_seconds(const Plan& plan, const PlanOp& op, bool* calibrated) const {
  return op_seconds(plan, op, plan.graph->node(op.node).kind, calibrated);
}

double OpCostModel::op_seconds(const Plan& plan, const PlanOp& op, OpKind node_kind, bool* calibrated) const {
  if (calibrated != nullptr) *calibrated = false;
  const int64_t bytes = op.bytes_read + op.bytes_written;
  if (op.role == OpRole::kEpilogue) return roofline(op.flops, bytes, epilogue_efficiency_);
  SPLITSCOPE_CHECK(op.role == OpRole::kCompute, "only compute and epilogue ops run on a compute lane");
  if (!calibrated_.empty()) {
    if (const double* measured = calibrated_seconds(op_signature(*plan.graph, op.node, op.slice))) {
      if (calibrated != nullptr) *calibrated = true;
      return *measured;
    }
  }
  return kind_seconds(node_kind, op.flops, bytes);
}

double OpCostModel::slice_seconds(const Graph& graph, NodeId node, const Slice& slice) const {
  if (!calibrated_.empty()) {
    if (const double* measured = calibrated_seconds(op_signature(graph, node, slice))) {
      return *measured;
    }
  }
  const SliceCost cost = slice_cost(graph, node, slice);
  return kind_seconds(graph.node(node).kind, cost.flops, cost.bytes_read + cost.bytes_written);
}

}  // namespace splitscope
