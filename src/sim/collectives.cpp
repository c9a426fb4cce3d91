#include "sim/collectives.hpp"

#include <fmt/format.h>

#include "util/check.hpp"

namespace splitscope {
namespace {

int wrap(int index, int n) { return ((index % n) + n) % n; }

/// The ring schedule of an all-gather (N-1 steps) or all-reduce (2(N-1) steps).
CollectiveSchedule ring(const Plan& plan, const PlanOp& op) {
  const int n = static_cast<int>(op.participants.size());
  const bool reduce = op.collective == CollectiveKind::kAllReduce;
  const int steps = reduce ? 2 * (n - 1) : n - 1;
  CollectiveSchedule schedule;
  schedule.sends_needing_input.resize(static_cast<size_t>(n));
  schedule.deliveries_needing_input.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    CollectiveDelivery delivery;
    delivery.device = op.participants[static_cast<size_t>(i)];
    delivery.value = op.outputs[static_cast<size_t>(i)];
    delivery.own_input = i;
    delivery.waits_for = steps + 1;
    schedule.deliveries.push_back(delivery);
    schedule.deliveries_needing_input[static_cast<size_t>(i)].push_back(i);
  }
  // All-reduce chunks: B split into N parts whose sizes differ by at most one byte.
  const int64_t total = n > 0 ? plan.value(op.inputs.front()).bytes : 0;
  auto chunk_bytes = [&](int chunk) { return total / n + (chunk < total % n ? 1 : 0); };
  auto send_id = [n](int step, int i) { return step * n + i; };

  schedule.sends.resize(static_cast<size_t>(steps * n));
  for (int step = 0; step < steps; ++step) {
    for (int i = 0; i < n; ++i) {
      CollectiveSend& send = schedule.sends[static_cast<size_t>(send_id(step, i))];
      send.from_device = op.participants[static_cast<size_t>(i)];
      send.to_device = op.participants[static_cast<size_t>(wrap(i + 1, n))];
      send.delivers_to = wrap(i + 1, n);
      send.touches_from = i;
      if (!reduce) {
        send.bytes = plan.value(op.inputs[static_cast<size_t>(wrap(i - step, n))]).bytes;
      } else if (step < n - 1) {
        send.bytes = chunk_bytes(wrap(i - step, n));  // reduce-scatter
      } else {
        send.bytes = chunk_bytes(wrap(i + 1 - (step - (n - 1)), n));  // all-gather of the sums
      }
      schedule.deliveries[static_cast<size_t>(send.delivers_to)].bytes_received += send.bytes;
      if (step == 0) {
        send.waits_for = 1;
        send.needs_input = i;
        schedule.sends_needing_input[static_cast<size_t>(i)].push_back(send_id(step, i));
      } else {
        // The data it forwards arrived with (step-1, i-1); its own last send was (step-1, i).
        send.waits_for = 2;
        schedule.sends[static_cast<size_t>(send_id(step - 1, wrap(i - 1, n)))].then.push_back(
            send_id(step, i));
        schedule.sends[static_cast<size_t>(send_id(step - 1, i))].then.push_back(send_id(step, i));
      }
    }
  }
  return schedule;
}

/// Every slice not already on the root goes straight to it.
CollectiveSchedule concat(const Plan& plan, const PlanOp& op) {
  const int n = static_cast<int>(op.participants.size());
  CollectiveSchedule schedule;
  schedule.sends_needing_input.resize(static_cast<size_t>(n));
  schedule.deliveries_needing_input.resize(static_cast<size_t>(n));
  CollectiveDelivery root;
  root.device = op.device;
  root.value = op.outputs.front();
  for (int i = 0; i < n; ++i) {
    const int device = op.participants[static_cast<size_t>(i)];
    if (device == op.device) {
      root.own_input = i;
      root.waits_for += 1;
      schedule.deliveries_needing_input[static_cast<size_t>(i)].push_back(0);
      continue;
    }
    CollectiveSend send;
    send.from_device = device;
    send.to_device = op.device;
    send.bytes = plan.value(op.inputs[static_cast<size_t>(i)]).bytes;
    send.waits_for = 1;
    send.needs_input = i;
    send.delivers_to = 0;
    root.waits_for += 1;
    root.bytes_received += send.bytes;
    schedule.sends_needing_input[static_cast<size_t>(i)].push_back(
        static_cast<int>(schedule.sends.size()));
    schedule.sends.push_back(send);
  }
  schedule.deliveries.push_back(root);
  return schedule;
}

}  // namespace

CollectiveSchedule decompose_collective(const Plan& plan, const PlanOp& op) {
  SPLITSCOPE_CHECK(op.role == OpRole::kCollective, "not a collective");
  SPLITSCOPE_CHECK(!op.participants.empty() && op.inputs.size() == op.participants.size(),
                   fmt::format("collective op {} needs one input per participant", op.id));
  if (op.collective == CollectiveKind::kConcat) {
    SPLITSCOPE_CHECK(op.outputs.size() == 1, fmt::format("concat op {} has one output", op.id));
    return concat(plan, op);
  }
  SPLITSCOPE_CHECK(op.outputs.size() == op.participants.size(),
                   fmt::format("collective op {} needs one output per participant", op.id));
  return ring(plan, op);
}

}  // namespace splitscope
