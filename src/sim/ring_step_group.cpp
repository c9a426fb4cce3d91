#include "sim/ring_step_group.hpp"

#include <algorithm>
#include <unordered_map>

namespace splitscope {

std::optional<RingStepGroup> ring_step_group(const Plan& plan, const PlanOp& op, const RingSteps& steps,
                                             const Topology& topology, NcclGeneration generation) {
  const size_t n = op.participants.size();
  if (n < static_cast<size_t>(kMinStepGroupParticipants)) return std::nullopt;
  RingStepGroup group;
  group.steps = &steps;
  group.links.reserve(2 * n);
  std::unordered_map<int, int> crossings;
  for (size_t i = 0; i < n; ++i) {
    const int from = op.participants[i];
    const int to = op.participants[(i + 1) % n];
    if (from == to) return std::nullopt;
    const Route route = topology.route(from, to);
    if (route.link_count == 0) return std::nullopt;
    if (i == 0) group.latency_seconds = route.latency_seconds;
    if (route.latency_seconds != group.latency_seconds) return std::nullopt;
    for (const int link : route.links()) {
      group.links.push_back(link);
      crossings[link] += 1;
    }
  }
  const Link& first = topology.links()[static_cast<size_t>(group.links.front())];
  const int per_link = crossings.begin()->second;
  for (const auto& [id, count] : crossings) {
    const Link& link = topology.links()[static_cast<size_t>(id)];
    if (count != per_link || link.bytes_per_second != first.bytes_per_second ||
        link.line_bytes_per_second != first.line_bytes_per_second || link.protocol != first.protocol) {
      return std::nullopt;
    }
  }
  // Crossing a link k times takes the flow's rate k times from it, as k sends would: in link order, so the
  // flow network sees the same multiset of links whatever the ring order.
  std::sort(group.links.begin(), group.links.end());
  NcclRingSends priced;
  const std::vector<NcclSendShape> step = nccl_ring_step(op, steps.send_bytes);
  if (nccl_ring_pricing(plan, op, step, steps.segments, topology, generation, &priced)) {
    // Symmetric sends have one flow size; keep one.
    priced.flow_bytes.resize(1);
    group.nccl = std::move(priced);
  }
  return group;
}

}  // namespace splitscope
