#include "sim/network/flow_network.hpp"

#include <algorithm>
#include <limits>

#include "util/check.hpp"

namespace splitscope {
namespace {

// A link whose residual capacity is below this fraction of its capacity is full.
constexpr double kFullFraction = 1e-12;

}  // namespace

FlowNetwork::FlowNetwork(std::vector<double> link_bytes_per_second) {
  links_.resize(link_bytes_per_second.size());
  for (size_t i = 0; i < links_.size(); ++i) {
    SPLITSCOPE_CHECK(link_bytes_per_second[i] > 0, "a link needs a positive bandwidth");
    links_[i].capacity = link_bytes_per_second[i];
  }
}

FlowNetwork::FlowId FlowNetwork::start(double now, std::span<const int> links, double bytes) {
  const FlowId id = join(now, links, bytes);
  if (unsettled()) settle(now);
  return id;
}

void FlowNetwork::finish(double now, FlowId id) {
  leave(id);
  if (unsettled()) settle(now);
}

FlowNetwork::FlowId FlowNetwork::join(double now, std::span<const int> links, double bytes) {
  SPLITSCOPE_CHECK(!links.empty(), "a flow crosses some link");
  SPLITSCOPE_CHECK(bytes > 0, "a flow carries some bytes");
  FlowId id;
  if (free_.empty()) {
    id = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
  } else {
    id = free_.back();
    free_.pop_back();
  }
  Flow& flow = flows_[static_cast<size_t>(id)];
  flow.link_count = static_cast<int>(links.size());
  flow.wide = -1;
  if (links.size() > kMaxRouteLinks) {
    if (free_wide_.empty()) {
      flow.wide = static_cast<int>(wide_links_.size());
      wide_links_.emplace_back();
    } else {
      flow.wide = free_wide_.back();
      free_wide_.pop_back();
    }
    wide_links_[static_cast<size_t>(flow.wide)].assign(links.begin(), links.end());
  }
  flow.remaining = bytes;
  flow.rate = 0;
  flow.updated_at = now;
  flow.next_rate = 0;
  flow.mark = 0;
  flow.frozen = false;
  flow.fresh = false;
  flow.active = true;
  ++active_;
  bool alone = true;
  for (size_t i = 0; i < links.size(); ++i) {
    const int link = links[i];
    SPLITSCOPE_CHECK(link >= 0 && static_cast<size_t>(link) < links_.size(), "unknown link");
    if (flow.wide < 0) flow.links[i] = link;
    LinkState& state = links_[static_cast<size_t>(link)];
    // A link it crossed already ends with its own entry (others would have ended `alone` then).
    alone = alone && (state.flows.empty() || state.flows.back() == id);
    state.flows.push_back(id);
  }
  if (alone) {
    // Nothing else on its links, so no one else's rate changes.
    const double rate = alone_rate(links);
    flow.rate = rate;
    flow.finish = now + bytes / rate;
    rescheduled_.assign(1, id);
    return id;
  }
  // Shared: its rate, and those of the flows it meets, wait for settle().
  flow.fresh = true;
  pending_seeds_.insert(pending_seeds_.end(), links.begin(), links.end());
  rescheduled_.clear();
  return id;
}

std::span<const int> FlowNetwork::links_of(const Flow& flow) const {
  if (flow.wide >= 0) return wide_links_[static_cast<size_t>(flow.wide)];
  return {flow.links.data(), static_cast<size_t>(flow.link_count)};
}

double FlowNetwork::alone_rate(std::span<const int> links) const {
  // The slowest link; one it crosses k times gives it 1/k.
  double rate = std::numeric_limits<double>::infinity();
  if (links.size() > kMaxRouteLinks) {
    // A group's thousands of links: count the crossings in one pass, not per link.
    crossings_.resize(links_.size(), 0);
    for (const int link : links) crossings_.at(static_cast<size_t>(link)) += 1;
    for (const int link : links) {
      const double crossings = crossings_[static_cast<size_t>(link)];
      rate = std::min(rate, links_[static_cast<size_t>(link)].capacity / crossings);
    }
    for (const int link : links) crossings_[static_cast<size_t>(link)] = 0;
    return rate;
  }
  for (size_t i = 0; i < links.size(); ++i) {
    const auto crossings = std::count(links.begin(), links.begin() + static_cast<std::ptrdiff_t>(i) + 1, links[i]);
    rate = std::min(rate, links_.at(static_cast<size_t>(links[i])).capacity / static_cast<double>(crossings));
  }
  return rate;
}

void FlowNetwork::leave(FlowId id) {
  Flow& flow = flows_.at(static_cast<size_t>(id));
  SPLITSCOPE_CHECK(flow.active, "finish of a flow that is not running");
  const std::span<const int> crossed = links_of(flow);
  for (const int link : crossed) {
    auto& on_link = links_[static_cast<size_t>(link)].flows;
    const auto it = std::find(on_link.begin(), on_link.end(), id);
    *it = on_link.back();
    on_link.pop_back();
  }
  flow.active = false;
  --active_;
  free_.push_back(id);
  bool shared = false;
  for (const int link : crossed) shared = shared || !links_[static_cast<size_t>(link)].flows.empty();
  // Shared: the flows it leaves get their new rates at settle() (none if it ran alone).
  if (shared) pending_seeds_.insert(pending_seeds_.end(), crossed.begin(), crossed.end());
  if (flow.wide >= 0) {
    free_wide_.push_back(flow.wide);
    flow.wide = -1;
  }
  rescheduled_.clear();
}

void FlowNetwork::settle(double now) {
  rescheduled_.clear();
  ++epoch_;
  // One component at a time, as a start or finish alone would have reshared it.
  for (const int seed : pending_seeds_) {
    if (links_[static_cast<size_t>(seed)].mark == epoch_) continue;
    gather_component(seed);
    reshare(now);
  }
  pending_seeds_.clear();
}

void FlowNetwork::reshare(double now) {
  ++reshares_;
  for (FlowId id : component_flows_) {
    Flow& flow = flows_[static_cast<size_t>(id)];
    flow.remaining = std::max(0.0, flow.remaining - flow.rate * (now - flow.updated_at));
    flow.updated_at = now;
  }
  fill_fair_shares();
  for (FlowId id : component_flows_) {
    Flow& flow = flows_[static_cast<size_t>(id)];
    if (!flow.fresh && flow.next_rate == flow.rate) continue;
    flow.fresh = false;
    flow.rate = flow.next_rate;
    flow.finish = now + flow.remaining / flow.rate;
    rescheduled_.push_back(id);
  }
}

void FlowNetwork::gather_component(int seed) {
  component_links_.clear();
  component_flows_.clear();
  links_[static_cast<size_t>(seed)].mark = epoch_;
  component_links_.push_back(seed);
  for (size_t next = 0; next < component_links_.size(); ++next) {
    const LinkState& state = links_[static_cast<size_t>(component_links_[next])];
    for (FlowId id : state.flows) {
      Flow& flow = flows_[static_cast<size_t>(id)];
      if (flow.mark == epoch_) continue;
      flow.mark = epoch_;
      component_flows_.push_back(id);
      for (const int link : links_of(flow)) {
        LinkState& other = links_[static_cast<size_t>(link)];
        if (other.mark == epoch_) continue;
        other.mark = epoch_;
        component_links_.push_back(link);
      }
    }
  }
}

void FlowNetwork::fill_fair_shares() {
  for (int link : component_links_) {
    LinkState& state = links_[static_cast<size_t>(link)];
    state.residual = state.capacity;
    state.unfrozen = static_cast<int>(state.flows.size());
  }
  for (FlowId id : component_flows_) flows_[static_cast<size_t>(id)].frozen = false;
  size_t unfrozen_flows = component_flows_.size();
  double level = 0;
  while (unfrozen_flows > 0) {
    // Grow every unfrozen flow by the most the fullest link allows.
    double step = std::numeric_limits<double>::infinity();
    int bottleneck = -1;
    for (int link : component_links_) {
      const LinkState& state = links_[static_cast<size_t>(link)];
      if (state.unfrozen == 0) continue;
      const double share = state.residual / state.unfrozen;
      if (share < step) {
        step = share;
        bottleneck = link;
      }
    }
    SPLITSCOPE_CHECK(bottleneck >= 0, "unfrozen flows on no link");
    level += step;
    for (int link : component_links_) {
      LinkState& state = links_[static_cast<size_t>(link)];
      if (state.unfrozen > 0) state.residual -= step * state.unfrozen;
    }
    links_[static_cast<size_t>(bottleneck)].residual = 0;
    // Freeze the flows on every link that is now full.
    for (int link : component_links_) {
      LinkState& state = links_[static_cast<size_t>(link)];
      if (state.unfrozen == 0 || state.residual > kFullFraction * state.capacity) continue;
      for (FlowId id : state.flows) {
        Flow& flow = flows_[static_cast<size_t>(id)];
        if (flow.frozen) continue;
        flow.frozen = true;
        flow.next_rate = level;
        --unfrozen_flows;
        for (const int link : links_of(flow)) links_[static_cast<size_t>(link)].unfrozen -= 1;
      }
    }
  }
}

}  // namespace splitscope
