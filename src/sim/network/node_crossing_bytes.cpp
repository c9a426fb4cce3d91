#include "sim/network/node_crossing_bytes.hpp"

#include "plan/collective_schedule.hpp"
#include "plan/ring_steps.hpp"

namespace splitscope {

int64_t default_cross_node_bytes(const Plan& plan, NodeShape shape) {
  const auto crosses = [&](int from, int to) {
    return from / shape.devices_per_node != to / shape.devices_per_node;
  };
  int64_t bytes = 0;
  for (const PlanOp& op : plan.ops) {
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
        continue;
      }
      for (const CollectiveSend& send : collective_schedule(plan, op).sends) {
        if (send.from_device != send.to_device && crosses(send.from_device, send.to_device)) bytes += send.bytes;
      }
    }
  }
  return bytes;
}

}  // namespace splitscope
