#include "sim/network/ring_step_group.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace splitscope {

namespace {

/// A mixed step (its sends' routes differ) as one group, paced by its
/// slowest send: the group drains at the smallest share any of its links
/// gives one crossing, so it carries the bytes that make its time the
/// longest any send's would be at its own share.
RingStepGroup mixed_ring_step_group(const Plan& plan, const PlanOp& op, const RingSteps& steps,
                                    const Topology& topology, NcclGeneration generation,
                                    const std::vector<Route>& routes,
                                    const std::unordered_map<int, int>& crossings) {
  RingStepGroup group;
  group.steps = &steps;
  group.links.reserve(4 * routes.size());
  const auto share = [&](int link) {
    return topology.links()[static_cast<size_t>(link)].bytes_per_second / crossings.at(link);
  };
  std::vector<double> send_rates;  // each send's share: its slowest link's
  send_rates.reserve(routes.size());
  double group_rate = std::numeric_limits<double>::infinity();
  for (const Route& route : routes) {
    group.latency_seconds = std::max(group.latency_seconds, route.latency_seconds);
    double rate = std::numeric_limits<double>::infinity();
    for (const int link : route.links()) {
      group.links.push_back(link);
      rate = std::min(rate, share(link));
    }
    send_rates.push_back(rate);
    group_rate = std::min(group_rate, rate);
  }
  std::sort(group.links.begin(), group.links.end());
  NcclRingSends priced;
  const std::vector<NcclSendShape> step = nccl_ring_step(op, steps.send_bytes);
  if (nccl_ring_pricing(plan, op, step, steps.segments, topology, generation, &priced)) {
    double longest = 0;  // seconds
    for (size_t i = 0; i < routes.size(); ++i) longest = std::max(longest, priced.flow_bytes[i] / send_rates[i]);
    priced.flow_bytes.assign(1, longest * group_rate);
    group.nccl = std::move(priced);
  }
  return group;
}

/// Whether a step whose links differ is still uniform: every send pays the
/// same latency, gets the same share alone (its slowest link's capacity over
/// the step's crossings of it) and, where NCCL prices the ring (`priced`
/// not null), drains the same bytes. Progressive filling then freezes every
/// send at that share in its first round, so the group is each send exactly,
/// as on one switch: a data-parallel ring of one GPU per node whose every
/// hop crosses the same tiers (NIC, leaf uplink, leaf uplink, NIC).
bool uniform_ring_step(const Topology& topology, const std::vector<Route>& routes,
                       const std::unordered_map<int, int>& crossings, const NcclRingSends* priced) {
  double first_share = -1;
  for (const Route& route : routes) {
    if (route.latency_seconds != routes.front().latency_seconds) return false;
    double share = std::numeric_limits<double>::infinity();
    for (const int link : route.links()) {
      share = std::min(share, topology.links()[static_cast<size_t>(link)].bytes_per_second / crossings.at(link));
    }
    if (first_share < 0) first_share = share;
    if (share != first_share) return false;
  }
  if (priced == nullptr) return true;
  const std::vector<double>& bytes = priced->flow_bytes;
  return std::all_of(bytes.begin(), bytes.end(), [&](double b) { return b == bytes.front(); });
}

}  // namespace

std::optional<RingStepGroup> ring_step_group(const Plan& plan, const PlanOp& op, const RingSteps& steps,
                                             const Topology& topology, NcclGeneration generation) {
  const size_t n = op.participants.size();
  if (n < static_cast<size_t>(kMinStepGroupParticipants)) return std::nullopt;
  RingStepGroup group;
  group.steps = &steps;
  group.links.reserve(2 * n);
  std::unordered_map<int, int> crossings;
  std::vector<Route> routes;
  routes.reserve(n);
  bool symmetric = true;
  for (size_t i = 0; i < n; ++i) {
    const int from = op.participants[i];
    const int to = op.participants[(i + 1) % n];
    if (from == to) return std::nullopt;
    const Route route = topology.route(from, to);
    if (route.link_count == 0) return std::nullopt;
    if (i == 0) group.latency_seconds = route.latency_seconds;
    if (route.latency_seconds != group.latency_seconds) symmetric = false;
    for (const int link : route.links()) {
      group.links.push_back(link);
      crossings[link] += 1;
    }
    routes.push_back(route);
  }
  const Link& first = topology.links()[static_cast<size_t>(group.links.front())];
  const int per_link = crossings.begin()->second;
  for (const auto& [id, count] : crossings) {
    const Link& link = topology.links()[static_cast<size_t>(id)];
    if (count != per_link || link.bytes_per_second != first.bytes_per_second ||
        link.line_bytes_per_second != first.line_bytes_per_second || link.protocol != first.protocol) {
      symmetric = false;
      break;
    }
  }
  const std::vector<NcclSendShape> step = nccl_ring_step(op, steps.send_bytes);
  NcclRingSends priced;
  const bool nccl_prices = nccl_ring_pricing(plan, op, step, steps.segments, topology, generation, &priced);
  if (!symmetric && !uniform_ring_step(topology, routes, crossings, nccl_prices ? &priced : nullptr)) {
    if (static_cast<int64_t>(steps.steps) * static_cast<int64_t>(n) < kMixedStepGroupMinSends) return std::nullopt;
    return mixed_ring_step_group(plan, op, steps, topology, generation, routes, crossings);
  }
  // Crossing a link k times takes the flow's rate k times from it, as k sends would: in link order, so the
  // flow network sees the same multiset of links whatever the ring order.
  std::sort(group.links.begin(), group.links.end());
  if (nccl_prices) {
    // Symmetric and uniform sends have one flow size; keep one.
    priced.flow_bytes.resize(1);
    group.nccl = std::move(priced);
  }
  return group;
}

}  // namespace splitscope
