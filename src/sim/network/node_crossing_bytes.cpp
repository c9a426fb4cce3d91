#include "sim/network/node_crossing_bytes.hpp"

#include "sim/engine/replica_view.hpp"

#include "plan/collective_schedule.hpp"
#include "plan/ring_steps.hpp"

namespace splitscope {

namespace {

/// Bytes of one transfer or collective of `plan` that cross nodes.
int64_t op_crossing_bytes(const Plan& plan, const PlanOp& op, NodeShape shape) {
  const auto crosses = [&](int from, int to) {
    return from / shape.devices_per_node != to / shape.devices_per_node;
  };
  int64_t bytes = 0;
  if (op.role == OpRole::kTransfer) {
    if (crosses(op.src_device, op.device)) bytes += op.bytes_moved;
  } else if (op.role == OpRole::kCollective) {
    if (const std::optional<RingSteps> steps = ring_steps(plan, op)) {
      const size_t n = op.participants.size();
      for (size_t i = 0; i < n; ++i) {
        const int from = op.participants[(i + n - 1) % n];
        const int to = op.participants[i];
        if (from != to && crosses(from, to)) bytes += steps->deliveries[i].bytes_received;
      }
      return bytes;
    }
    for (const CollectiveSend& send : collective_schedule(plan, op).sends) {
      if (send.from_device != send.to_device && crosses(send.from_device, send.to_device)) bytes += send.bytes;
    }
  }
  return bytes;
}

}  // namespace

int64_t default_cross_node_bytes(const Plan& plan, NodeShape shape) {
  int64_t bytes = 0;
  if (!plan.replicas) {
    for (const PlanOp& op : plan.ops) bytes += op_crossing_bytes(plan, op, shape);
    return bytes;
  }
  // Replicas held once: the spanning collectives over every replica's
  // devices; each replica's own moves on its own devices.
  const Plan view = widened_for_replicas(plan);
  const int each = plan.replicas->devices_each;
  for (const PlanOp& op : view.ops) {
    if (op.role != OpRole::kTransfer && op.role != OpRole::kCollective) continue;
    if (op.spans_replicas) {
      bytes += op_crossing_bytes(view, op, shape);
      continue;
    }
    for (int r = 0; r < plan.replicas->count; ++r) {
      PlanOp moved = op;
      if (moved.device >= 0) moved.device += r * each;
      if (moved.src_device >= 0) moved.src_device += r * each;
      for (int& device : moved.participants) device += r * each;
      bytes += op_crossing_bytes(view, moved, shape);
    }
  }
  return bytes;
}

}  // namespace splitscope
