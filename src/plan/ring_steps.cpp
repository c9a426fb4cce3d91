#include "plan/ring_steps.hpp"

#include <algorithm>

namespace splitscope {
namespace {

int ring_index(int index, int n) { return ((index % n) + n) % n; }

/// Elements of chunk c when `total` units are cut into n chunks, the first total mod n one unit longer.
int64_t even_chunk(int64_t total, int n, int c) { return total / n + (c < total % n ? 1 : 0); }

/// Whether `op` is a ring collective shaped as collective_schedule() requires.
bool ring_shaped(const Plan& plan, const PlanOp& op) {
  const size_t n = op.participants.size();
  if (op.role != OpRole::kCollective || op.algorithm != CollectiveAlgorithm::kRing || n < 2) return false;
  const bool reduce = op.collective == CollectiveKind::kAllReduce;
  if (!reduce && op.collective != CollectiveKind::kAllGather && op.collective != CollectiveKind::kReduceScatter) {
    return false;
  }
  if (op.inputs.empty() || op.outputs.size() != op.inputs.size()) return false;
  if (op.inputs.size() != n && !(reduce && op.inputs.size() % n == 0)) return false;
  for (int value : op.inputs) {
    if (value < 0 || static_cast<size_t>(value) >= plan.values.size()) return false;
  }
  for (int value : op.outputs) {
    if (value < 0 || static_cast<size_t>(value) >= plan.values.size()) return false;
  }
  if (reduce) {
    const size_t segments = op.inputs.size() / n;
    for (size_t p = 1; p < n; ++p) {
      for (size_t k = 0; k < segments; ++k) {
        if (plan.value(op.inputs[p * segments + k]).bytes != plan.value(op.inputs[k]).bytes) return false;
      }
    }
  }
  return true;
}

}  // namespace

std::optional<RingSteps> ring_steps(const Plan& plan, const PlanOp& op) {
  if (!ring_shaped(plan, op)) return std::nullopt;
  const int n = static_cast<int>(op.participants.size());
  RingSteps ring;
  ring.segments = static_cast<int>(op.inputs.size()) / n;
  ring.deliveries.resize(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    CollectiveDelivery& delivery = ring.deliveries[static_cast<size_t>(r)];
    delivery.device = op.participants[static_cast<size_t>(r)];
    delivery.value = op.outputs[static_cast<size_t>(r * ring.segments)];
  }
  switch (op.collective) {
    case CollectiveKind::kAllGather: {
      ring.steps = n - 1;
      int64_t total = 0;
      for (int value : op.inputs) total += plan.value(value).bytes;
      for (int r = 0; r < n; ++r) {
        const int64_t own = plan.value(op.inputs[static_cast<size_t>(r)]).bytes;
        ring.send_bytes = std::max(ring.send_bytes, own);
        ring.even = ring.even && own == plan.value(op.inputs.front()).bytes;
        ring.deliveries[static_cast<size_t>(r)].local_copy = r;
        ring.deliveries[static_cast<size_t>(r)].bytes_received = total - own;
      }
      break;
    }
    case CollectiveKind::kAllReduce: {
      ring.steps = 2 * (n - 1);
      int64_t elements = 0;
      for (int k = 0; k < ring.segments; ++k) elements += plan.value(op.inputs[static_cast<size_t>(k)]).bytes / 4;
      ring.send_bytes = even_chunk(elements, n, 0) * 4;
      ring.even = elements % n == 0;
      for (int r = 0; r < n; ++r) {
        ring.deliveries[static_cast<size_t>(r)].bytes_received =
            (2 * elements - even_chunk(elements, n, r) - even_chunk(elements, n, ring_index(r + 1, n))) * 4;
      }
      break;
    }
    case CollectiveKind::kReduceScatter: {
      ring.steps = n - 1;
      const Value& whole = plan.value(op.inputs.front());
      const int64_t channels = whole.channels.size();
      const int64_t per_channel = whole.bytes / 4 / std::max<int64_t>(1, channels);  // of every row
      const int64_t rows = std::max<int64_t>(1, whole.batch.size());
      ring.send_bytes = even_chunk(channels, n, 0) * per_channel * 4;
      ring.even = channels % n == 0;
      int64_t first = 0;
      for (int r = 0; r < n; ++r) {
        CollectiveDelivery& delivery = ring.deliveries[static_cast<size_t>(r)];
        delivery.first_element = first * per_channel / rows;  // within a row
        first += even_chunk(channels, n, r);
        delivery.bytes_received = (channels - even_chunk(channels, n, ring_index(r - 1, n))) * per_channel * 4;
      }
      break;
    }
    default: return std::nullopt;
  }
  return ring;
}

}  // namespace splitscope
