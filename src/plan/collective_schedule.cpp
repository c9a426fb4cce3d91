#include "plan/collective_schedule.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "util/check.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

int wrap(int index, int n) { return ((index % n) + n) % n; }

/// A schedule with a waiting list (sends, local copies) for each of the op's inputs.
CollectiveSchedule empty_schedule(const PlanOp& op) {
  CollectiveSchedule schedule;
  schedule.sends_needing_input.resize(op.inputs.size());
  schedule.deliveries_needing_input.resize(op.inputs.size());
  return schedule;
}

/// Each participant's delivery; with `local_copy`, its own input is copied in.
void add_deliveries(CollectiveSchedule& schedule, const PlanOp& op, bool local_copy) {
  const int n = static_cast<int>(op.participants.size());
  for (int i = 0; i < n; ++i) {
    CollectiveDelivery delivery;
    delivery.device = op.participants[static_cast<size_t>(i)];
    delivery.value = op.outputs[static_cast<size_t>(schedule.index(i, 0))];
    if (local_copy) {
      delivery.local_copy = i;
      for (int k = 0; k < schedule.segments; ++k) {
        delivery.waits_for += 1;
        schedule.deliveries_needing_input[static_cast<size_t>(schedule.index(i, k))].push_back(i);
      }
    }
    schedule.deliveries.push_back(delivery);
  }
}

/// Registers `send` (with its data fields set) and what it waits for.
void add_send(CollectiveSchedule& schedule, CollectiveSend send, const std::vector<int>& after) {
  const int id = static_cast<int>(schedule.sends.size());
  send.waits_for = static_cast<int>(after.size());
  for (int before : after) schedule.sends[static_cast<size_t>(before)].then.push_back(id);
  for (int slot : {send.needs_input, send.needs_receiver_input}) {
    if (slot < 0) continue;
    for (int k = 0; k < schedule.segments; ++k) {
      send.waits_for += 1;
      schedule.sends_needing_input[static_cast<size_t>(schedule.index(slot, k))].push_back(id);
    }
  }
  CollectiveDelivery& target = schedule.deliveries[static_cast<size_t>(send.delivers_to)];
  target.waits_for += 1;
  target.bytes_received += send.bytes;
  schedule.sends.push_back(std::move(send));
}

/// Registers ring send `send` of step `step` from participant `i` of `n`:
/// a first step waits for the sender's input; a later one for the send that
/// brought what it forwards, (step-1, i-1), and the sender's own last, (step-1, i).
void add_ring_send(CollectiveSchedule& schedule, CollectiveSend send, int step, int i, int n) {
  const auto send_id = [n](int s, int p) { return s * n + p; };
  if (step == 0) {
    send.needs_input = i;
    add_send(schedule, std::move(send), {});
  } else {
    add_send(schedule, std::move(send), {send_id(step - 1, wrap(i - 1, n)), send_id(step - 1, i)});
  }
}

CollectiveSchedule ring(const Plan& plan, const PlanOp& op) {
  const int n = static_cast<int>(op.participants.size());
  const bool reduce = op.collective == CollectiveKind::kAllReduce;
  const int64_t element = value_element_bytes(plan, plan.value(op.inputs.front()));
  CollectiveSchedule schedule = empty_schedule(op);
  schedule.segments = static_cast<int>(op.inputs.size()) / n;
  // An all-reduce over one participant is a copy; otherwise every element arrives by a send.
  add_deliveries(schedule, op, !reduce || n == 1);

  schedule.segment_starts.push_back(0);
  for (int k = 0; k < schedule.segments; ++k) {
    schedule.segment_starts.push_back(schedule.segment_starts.back() + plan.value(op.inputs[static_cast<size_t>(k)]).bytes / element);
  }
  const int64_t elements = schedule.segment_starts.back();
  const auto chunk = [&](int c) {
    const int64_t begin = c * (elements / n) + std::min<int64_t>(c, elements % n);
    return Range{begin, begin + elements / n + (c < elements % n ? 1 : 0)};
  };
  const int steps = reduce ? 2 * (n - 1) : n - 1;
  for (int step = 0; step < steps; ++step) {
    for (int i = 0; i < n; ++i) {
      CollectiveSend send;
      send.from = i;
      send.from_device = op.participants[static_cast<size_t>(i)];
      send.to_device = op.participants[static_cast<size_t>(wrap(i + 1, n))];
      send.delivers_to = wrap(i + 1, n);
      send.touches_from = i;
      send.from_input = step == 0;
      if (!reduce) {
        send.slice = wrap(i - step, n);
        send.bytes = plan.value(op.inputs[static_cast<size_t>(send.slice)]).bytes;
      } else if (step < n - 1) {
        send.elements = chunk(wrap(i - step, n));  // reduce-scatter
        send.reduces = true;
        send.needs_receiver_input = wrap(i + 1, n);
      } else {
        send.elements = chunk(wrap(i + 1 - (step - (n - 1)), n));  // all-gather of the sums
      }
      if (reduce) send.bytes = send.elements.size() * element;
      add_ring_send(schedule, std::move(send), step, i, n);
    }
  }
  return schedule;
}

/// Participant c's chunk of a reduce-scatter, in elements of one row of the tensor.
Range reduce_scatter_chunk(const Value& whole, int64_t element, int n, int c) {
  const int64_t channels = whole.channels.size();
  const int64_t rows = std::max<int64_t>(1, whole.batch.size());
  const int64_t per_channel = whole.bytes / element / rows / std::max<int64_t>(1, channels);
  const int64_t begin = c * (channels / n) + std::min<int64_t>(c, channels % n);
  const int64_t end = begin + channels / n + (c < channels % n ? 1 : 0);
  return Range{begin * per_channel, end * per_channel};
}

CollectiveSchedule ring_reduce_scatter(const Plan& plan, const PlanOp& op) {
  const int n = static_cast<int>(op.participants.size());
  CollectiveSchedule schedule = empty_schedule(op);
  schedule.staged = n > 1;
  const Value& whole = plan.value(op.inputs.front());
  const int64_t element = value_element_bytes(plan, whole);
  schedule.rows = std::max<int64_t>(1, whole.batch.size());
  schedule.row_elements = whole.bytes / element / schedule.rows;
  schedule.segment_starts = {0, whole.bytes / element};
  // One participant copies its (whole) chunk; otherwise every chunk arrives by a send.
  add_deliveries(schedule, op, n == 1);
  for (int i = 0; i < n; ++i) schedule.deliveries[static_cast<size_t>(i)].first_element = reduce_scatter_chunk(whole, element, n, i).begin;
  for (int step = 0; step < n - 1; ++step) {
    for (int i = 0; i < n; ++i) {
      CollectiveSend send;
      send.from = i;
      send.from_device = op.participants[static_cast<size_t>(i)];
      send.to_device = op.participants[static_cast<size_t>(wrap(i + 1, n))];
      send.delivers_to = wrap(i + 1, n);
      send.touches_from = i;
      send.elements = reduce_scatter_chunk(whole, element, n, wrap(i - step - 1, n));
      send.bytes = schedule.rows * send.elements.size() * element;
      send.reduces = true;
      send.needs_receiver_input = wrap(i + 1, n);
      send.from_input = step == 0;
      send.from_staging = step > 0;
      send.to_staging = step < n - 2;  // the last step lands the receiver's own chunk in its output
      add_ring_send(schedule, std::move(send), step, i, n);
    }
  }
  return schedule;
}

CollectiveSchedule ring_broadcast(const Plan& plan, const PlanOp& op) {
  const int n = static_cast<int>(op.participants.size());
  CollectiveSchedule schedule = empty_schedule(op);
  const Value& whole = plan.value(op.inputs.front());
  const int64_t element = value_element_bytes(plan, whole);
  const int64_t elements = whole.bytes / element;
  schedule.segment_starts = {0, elements};
  // Every participant receives; the root copies its own input instead.
  add_deliveries(schedule, op, false);
  CollectiveDelivery& root = schedule.deliveries.front();
  root.local_copy = 0;
  root.waits_for = 1;
  schedule.deliveries_needing_input[0].push_back(0);
  const int64_t per_chunk = kBroadcastChunkBytes / element;
  const int64_t chunks = std::max<int64_t>(1, (elements + per_chunk - 1) / per_chunk);
  const auto send_id = [n](int64_t chunk, int hop) { return static_cast<int>(chunk * (n - 1) + hop); };
  for (int64_t k = 0; k < chunks; ++k) {
    const Range part{k * elements / chunks, (k + 1) * elements / chunks};
    for (int hop = 0; hop < n - 1; ++hop) {
      CollectiveSend send;
      send.from = hop;
      send.from_device = op.participants[static_cast<size_t>(hop)];
      send.to_device = op.participants[static_cast<size_t>(hop + 1)];
      send.delivers_to = hop + 1;
      send.touches_from = hop;
      send.elements = part;
      send.bytes = part.size() * element;
      send.from_input = hop == 0;
      std::vector<int> after;
      if (hop > 0) after.push_back(send_id(k, hop - 1));  // the chunk has arrived here
      if (k > 0) after.push_back(send_id(k - 1, hop));    // this participant's previous send
      if (hop == 0) send.needs_input = 0;
      add_send(schedule, std::move(send), after);
    }
  }
  return schedule;
}

CollectiveSchedule direct_concat(const Plan& plan, const PlanOp& op) {
  const int n = static_cast<int>(op.participants.size());
  CollectiveSchedule schedule = empty_schedule(op);
  CollectiveDelivery root;
  root.device = op.device;
  root.value = op.outputs.front();
  for (int i = 0; i < n; ++i) {
    if (op.participants[static_cast<size_t>(i)] != op.device) continue;
    root.local_copy = i;
    root.waits_for = 1;
    schedule.deliveries_needing_input[static_cast<size_t>(i)].push_back(0);
  }
  schedule.deliveries.push_back(root);
  for (int i = 0; i < n; ++i) {
    const int device = op.participants[static_cast<size_t>(i)];
    if (device == op.device) continue;
    CollectiveSend send;
    send.from = i;
    send.from_device = device;
    send.to_device = op.device;
    send.delivers_to = 0;
    send.slice = i;
    send.from_input = true;
    send.bytes = plan.value(op.inputs[static_cast<size_t>(i)]).bytes;
    send.needs_input = i;
    add_send(schedule, std::move(send), {});
  }
  return schedule;
}

}  // namespace

std::vector<SegmentPiece> CollectiveSchedule::pieces(Range elements) const {
  std::vector<SegmentPiece> pieces;
  for (int k = 0; k < segments; ++k) {
    const int64_t begin = std::max(elements.begin, segment_starts[static_cast<size_t>(k)]);
    const int64_t end = std::min(elements.end, segment_starts[static_cast<size_t>(k) + 1]);
    if (begin >= end) continue;
    const int64_t start = segment_starts[static_cast<size_t>(k)];
    pieces.push_back(SegmentPiece{k, Range{begin - start, end - start}, begin - elements.begin});
  }
  return pieces;
}

void NextSends::push_back(int send) {
  SPLITSCOPE_CHECK(count_ < static_cast<int>(sends_.size()), "a send enables at most two others");
  sends_[static_cast<size_t>(count_++)] = send;
}

CollectiveAlgorithm default_algorithm(CollectiveKind kind) {
  // Every kind but concat runs as a ring.
  return kind == CollectiveKind::kConcat ? CollectiveAlgorithm::kDirect : CollectiveAlgorithm::kRing;
}

bool algorithm_fits(CollectiveKind kind, CollectiveAlgorithm algorithm) {
  switch (kind) {
    case CollectiveKind::kAllGather:
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kBroadcast: return algorithm == CollectiveAlgorithm::kRing;
    case CollectiveKind::kConcat: return algorithm == CollectiveAlgorithm::kDirect;
  }
  return false;
}

namespace {

/// The most sends one collective may unroll into (docs/limits.md): a ring
/// all-reduce over N devices is 2(N-1)N sends, a broadcast of K chunks
/// (N-1)K, and each send is a task and events of its own. 2^22 admits an
/// all-reduce over 1,024 devices and a broadcast of 32 GiB over 64.
constexpr int64_t kMaxCollectiveSends = int64_t{1} << 22;

/// The sends collective_schedule(plan, op) would make, counted without making them.
int64_t collective_send_count(const Plan& plan, const PlanOp& op) {
  const int64_t n = static_cast<int64_t>(op.participants.size());
  switch (op.collective) {
    case CollectiveKind::kBroadcast: {
      const int64_t element = op.inputs.empty() ? 4 : value_element_bytes(plan, plan.value(op.inputs.front()));
      const int64_t elements = op.inputs.empty() ? 0 : plan.value(op.inputs.front()).bytes / element;
      const int64_t per_chunk = kBroadcastChunkBytes / element;
      return std::max<int64_t>(1, (elements + per_chunk - 1) / per_chunk) * std::max<int64_t>(0, n - 1);
    }
    case CollectiveKind::kAllReduce: return 2 * std::max<int64_t>(0, n - 1) * n;
    case CollectiveKind::kConcat: return n;
    default: return std::max<int64_t>(0, n - 1) * n;  // all-gather, reduce-scatter
  }
}

}  // namespace

CollectiveSchedule collective_schedule(const Plan& plan, const PlanOp& op) {
  SPLITSCOPE_CHECK(op.role == OpRole::kCollective, "not a collective");
  if (const int64_t sends = collective_send_count(plan, op); sends > kMaxCollectiveSends) {
    const bool chunked = op.collective == CollectiveKind::kBroadcast;
    throw InputError(chunked ? "--bytes" : "--devices", "",
                     fmt::format("{} {} of {} bytes over {} devices unrolls into {} sends, past the limit of {} "
                                 "(docs/limits.md); give fewer {}",
                                 op.collective == CollectiveKind::kAllReduce || op.collective == CollectiveKind::kAllGather
                                     ? "an"
                                     : "a",
                                 to_string(op.collective), op.inputs.empty() ? 0 : plan.value(op.inputs.front()).bytes,
                                 op.participants.size(), sends, kMaxCollectiveSends,
                                 chunked ? "bytes or devices" : "devices"));
  }
  const size_t n = op.participants.size();
  SPLITSCOPE_CHECK(algorithm_fits(op.collective, op.algorithm),
                   fmt::format("collective op {}: a {} cannot run as {}", op.id, to_string(op.collective),
                               to_string(op.algorithm)));
  if (op.collective == CollectiveKind::kBroadcast) {
    SPLITSCOPE_CHECK(n > 0 && op.inputs.size() == 1 && op.outputs.size() == n && op.participants[0] == op.device,
                     fmt::format("broadcast op {} needs the root's input, the root first and an output per participant",
                                 op.id));
    return ring_broadcast(plan, op);
  }
  const bool segmented = op.collective == CollectiveKind::kAllReduce;
  SPLITSCOPE_CHECK(n > 0 && (op.inputs.size() == n || (segmented && !op.inputs.empty() && op.inputs.size() % n == 0)),
                   fmt::format("collective op {} needs one input per participant (an all-reduce: as many each)", op.id));
  if (op.collective == CollectiveKind::kConcat) {
    SPLITSCOPE_CHECK(op.outputs.size() == 1, fmt::format("concat op {} has one output", op.id));
    return direct_concat(plan, op);
  }
  SPLITSCOPE_CHECK(op.outputs.size() == op.inputs.size(),
                   fmt::format("collective op {} needs an output for each input", op.id));
  if (op.collective == CollectiveKind::kReduceScatter) return ring_reduce_scatter(plan, op);
  if (segmented) {
    const size_t segments = op.inputs.size() / n;
    for (size_t p = 1; p < n; ++p) {
      for (size_t k = 0; k < segments; ++k) {
        SPLITSCOPE_CHECK(plan.value(op.inputs[p * segments + k]).bytes == plan.value(op.inputs[k]).bytes,
                         fmt::format("all-reduce op {}: participants' segments differ in size", op.id));
      }
    }
  }
  return ring(plan, op);
}

}  // namespace splitscope
