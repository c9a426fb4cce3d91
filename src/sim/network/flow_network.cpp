#include "sim/network/flow_network.hpp"

#include <algorithm>
#include <limits>

#include "util/check.hpp"

namespace splitscope {
namespace {

// A link whose residual capacity is below this fraction of its capacity is full.
constexpr double kFullFraction = 1e-12;

uint64_t hash_of(std::span<const int> links) {
  uint64_t hash = 14695981039346656037ull;  // FNV-1a
  for (const int link : links) {
    hash ^= static_cast<uint32_t>(link);
    hash *= 1099511628211ull;
  }
  return hash;
}

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

FlowNetwork::LinkSetId FlowNetwork::link_set(std::span<const int> links) {
  SPLITSCOPE_CHECK(!links.empty(), "a flow crosses some link");
  std::vector<LinkSetId>& alike = sets_by_hash_[hash_of(links)];
  for (const LinkSetId id : alike) {
    if (std::ranges::equal(sets_[static_cast<size_t>(id)].links, links)) return id;
  }
  LinkSet set;
  set.links.assign(links.begin(), links.end());
  crossings_.resize(links_.size(), 0);
  for (const int link : links) {
    SPLITSCOPE_CHECK(link >= 0 && static_cast<size_t>(link) < links_.size(), "unknown link");
    crossings_[static_cast<size_t>(link)] += 1;
  }
  set.alone_rate = std::numeric_limits<double>::infinity();
  for (const int link : links) {
    set.alone_rate = std::min(set.alone_rate, links_[static_cast<size_t>(link)].capacity /
                                                  static_cast<double>(crossings_[static_cast<size_t>(link)]));
  }
  // Rounding keeps the order of capacity / crossings (a strictly smaller
  // rounded share is a smaller exact one), so the links whose rounded share
  // is the smallest hold the one that is smallest for every flow count.
  for (const int link : links) {
    const std::pair<double, int> bottleneck{links_[static_cast<size_t>(link)].capacity,
                                            crossings_[static_cast<size_t>(link)]};
    if (bottleneck.first / bottleneck.second == set.alone_rate &&
        std::ranges::find(set.bottlenecks, bottleneck) == set.bottlenecks.end()) {
      set.bottlenecks.push_back(bottleneck);
    }
  }
  for (const int link : links) crossings_[static_cast<size_t>(link)] = 0;
  const auto id = static_cast<LinkSetId>(sets_.size());
  sets_.push_back(std::move(set));
  alike.push_back(id);
  return id;
}

int FlowNetwork::new_bundle() {
  int id;
  if (free_bundles_.empty()) {
    id = static_cast<int>(bundles_.size());
    bundles_.emplace_back();
  } else {
    id = free_bundles_.back();
    free_bundles_.pop_back();
  }
  Bundle& bundle = bundles_[static_cast<size_t>(id)];
  bundle.link_count = 0;
  bundle.set = -1;
  bundle.flows.clear();
  bundle.next_rate = 0;
  bundle.mark = 0;
  bundle.frozen = false;
  bundle.pending = false;
  bundle.foreign = 0;
  return id;
}

FlowNetwork::FlowId FlowNetwork::new_flow(double now, double bytes, int bundle) {
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
  flow.bundle = bundle;
  flow.remaining = bytes;
  flow.rate = 0;
  flow.updated_at = now;
  flow.finish = 0;
  flow.fresh = false;
  flow.active = true;
  ++active_;
  bundles_[static_cast<size_t>(bundle)].flows.push_back(id);
  return id;
}

FlowNetwork::FlowId FlowNetwork::join(double now, std::span<const int> links, double bytes) {
  SPLITSCOPE_CHECK(!links.empty(), "a flow crosses some link");
  if (links.size() > kMaxRouteLinks) return join(now, link_set(links), bytes);
  for (const int link : links) {
    SPLITSCOPE_CHECK(link >= 0 && static_cast<size_t>(link) < links_.size(), "unknown link");
  }
  const int bundle = new_bundle();
  Bundle& route = bundles_[static_cast<size_t>(bundle)];
  std::ranges::copy(links, route.links.begin());
  route.link_count = static_cast<int>(links.size());
  const FlowId id = new_flow(now, bytes, bundle);
  Flow& flow = flows_[static_cast<size_t>(id)];
  if (enter_links(bundle)) {
    // Nothing else on its links, so no one else's rate changes.
    flow.rate = alone_rate(links);
    flow.finish = now + bytes / flow.rate;
    rescheduled_.assign(1, id);
    return id;
  }
  // Shared: its rate, and those of the flows it meets, wait for settle().
  flow.fresh = true;
  pending_seeds_.insert(pending_seeds_.end(), links.begin(), links.end());
  rescheduled_.clear();
  return id;
}

FlowNetwork::FlowId FlowNetwork::join(double now, LinkSetId set_id, double bytes) {
  LinkSet& set = sets_.at(static_cast<size_t>(set_id));
  if (set.bundle >= 0) {
    // Beside flows over the same links: their rates all change, and only theirs if they are alone.
    const FlowId id = new_flow(now, bytes, set.bundle);
    flows_[static_cast<size_t>(id)].fresh = true;
    mark_pending(set.bundle);
    rescheduled_.clear();
    return id;
  }
  const int bundle = new_bundle();
  bundles_[static_cast<size_t>(bundle)].set = set_id;
  set.bundle = bundle;
  const FlowId id = new_flow(now, bytes, bundle);
  Flow& flow = flows_[static_cast<size_t>(id)];
  if (enter_links(bundle)) {
    flow.rate = set.alone_rate;
    flow.finish = now + bytes / flow.rate;
    rescheduled_.assign(1, id);
    return id;
  }
  flow.fresh = true;
  pending_seeds_.insert(pending_seeds_.end(), set.links.begin(), set.links.end());
  rescheduled_.clear();
  return id;
}

bool FlowNetwork::enter_links(int id) {
  Bundle& bundle = bundles_[static_cast<size_t>(id)];
  const bool is_set = bundle.set >= 0;
  bool alone = true;
  for (const int link : links_of(bundle)) {
    LinkState& state = links_[static_cast<size_t>(link)];
    // A link it crossed already ends with its own entry (others would have ended `alone` then).
    alone = alone && (state.bundles.empty() || state.bundles.back() == id);
    if (is_set || state.set_entries > 0) {
      for (const int other : state.bundles) {
        if (other == id) continue;
        Bundle& its = bundles_[static_cast<size_t>(other)];
        if (its.set >= 0) its.foreign += 1;
        if (is_set) bundle.foreign += 1;
      }
    }
    state.bundles.push_back(id);
    if (is_set) state.set_entries += 1;
  }
  return alone;
}

bool FlowNetwork::leave_links(int id) {
  const Bundle& bundle = bundles_[static_cast<size_t>(id)];
  const bool is_set = bundle.set >= 0;
  const std::span<const int> crossed = links_of(bundle);
  for (const int link : crossed) {
    LinkState& state = links_[static_cast<size_t>(link)];
    auto& on_link = state.bundles;
    const auto it = std::find(on_link.begin(), on_link.end(), id);
    *it = on_link.back();
    on_link.pop_back();
    if (is_set) state.set_entries -= 1;
    if (state.set_entries > 0) {
      for (const int other : on_link) {
        Bundle& its = bundles_[static_cast<size_t>(other)];
        if (other != id && its.set >= 0) its.foreign -= 1;
      }
    }
  }
  bool shared = false;
  for (const int link : crossed) shared = shared || !links_[static_cast<size_t>(link)].bundles.empty();
  return shared;
}

void FlowNetwork::mark_pending(int bundle) {
  Bundle& state = bundles_[static_cast<size_t>(bundle)];
  if (state.pending) return;
  state.pending = true;
  pending_bundles_.push_back(bundle);
}

std::span<const int> FlowNetwork::links_of(const Bundle& bundle) const {
  if (bundle.set >= 0) return sets_[static_cast<size_t>(bundle.set)].links;
  return {bundle.links.data(), static_cast<size_t>(bundle.link_count)};
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
  const int bundle_id = flow.bundle;
  Bundle& bundle = bundles_[static_cast<size_t>(bundle_id)];
  // As a link drops a flow's entry: the last one takes its place.
  const auto it = std::find(bundle.flows.begin(), bundle.flows.end(), id);
  *it = bundle.flows.back();
  bundle.flows.pop_back();
  flow.active = false;
  flow.bundle = -1;
  --active_;
  free_.push_back(id);
  rescheduled_.clear();
  if (!bundle.flows.empty()) {
    mark_pending(bundle_id);  // the others over its links speed up
    return;
  }
  // Shared: the flows it leaves get their new rates at settle() (none if it ran alone).
  if (leave_links(bundle_id)) {
    const std::span<const int> crossed = links_of(bundle);
    pending_seeds_.insert(pending_seeds_.end(), crossed.begin(), crossed.end());
  }
  if (bundle.set >= 0) sets_[static_cast<size_t>(bundle.set)].bundle = -1;
  bundle.pending = false;  // a stale entry of pending_bundles_ is skipped
  free_bundles_.push_back(bundle_id);
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
  for (const int id : pending_bundles_) {
    Bundle& bundle = bundles_[static_cast<size_t>(id)];
    if (!bundle.pending) continue;
    bundle.pending = false;
    if (bundle.mark == epoch_) continue;  // reshared with a seed's component
    if (bundle.foreign > 0) {
      gather_component(links_of(bundle).front());
      reshare(now);
    } else {
      reshare_alone(id, now);
    }
  }
  pending_bundles_.clear();
}

void FlowNetwork::reshare(double now) {
  ++reshares_;
  for (const int id : component_bundles_) {
    for (const FlowId flow_id : bundles_[static_cast<size_t>(id)].flows) {
      Flow& flow = flows_[static_cast<size_t>(flow_id)];
      flow.remaining = std::max(0.0, flow.remaining - flow.rate * (now - flow.updated_at));
      flow.updated_at = now;
    }
  }
  fill_fair_shares();
  for (const int id : component_bundles_) set_rates(bundles_[static_cast<size_t>(id)], now);
}

void FlowNetwork::reshare_alone(int id, double now) {
  ++reshares_;
  Bundle& bundle = bundles_[static_cast<size_t>(id)];
  const auto flows = static_cast<int64_t>(bundle.flows.size());
  // What fill_fair_shares() computes for it: its first step, the smallest residual / unfrozen.
  double rate = std::numeric_limits<double>::infinity();
  for (const auto& [capacity, crossings] : sets_[static_cast<size_t>(bundle.set)].bottlenecks) {
    rate = std::min(rate, capacity / static_cast<double>(crossings * flows));
  }
  bundle.next_rate = rate;
  for (const FlowId flow_id : bundle.flows) {
    Flow& flow = flows_[static_cast<size_t>(flow_id)];
    flow.remaining = std::max(0.0, flow.remaining - flow.rate * (now - flow.updated_at));
    flow.updated_at = now;
  }
  set_rates(bundle, now);
}

void FlowNetwork::set_rates(const Bundle& bundle, double now) {
  for (const FlowId flow_id : bundle.flows) {
    Flow& flow = flows_[static_cast<size_t>(flow_id)];
    if (!flow.fresh && bundle.next_rate == flow.rate) continue;
    flow.fresh = false;
    flow.rate = bundle.next_rate;
    flow.finish = now + flow.remaining / flow.rate;
    rescheduled_.push_back(flow_id);
  }
}

void FlowNetwork::gather_component(int seed) {
  component_links_.clear();
  component_bundles_.clear();
  links_[static_cast<size_t>(seed)].mark = epoch_;
  component_links_.push_back(seed);
  for (size_t next = 0; next < component_links_.size(); ++next) {
    const LinkState& state = links_[static_cast<size_t>(component_links_[next])];
    for (const int id : state.bundles) {
      Bundle& bundle = bundles_[static_cast<size_t>(id)];
      if (bundle.mark == epoch_) continue;
      bundle.mark = epoch_;
      component_bundles_.push_back(id);
      for (const int link : links_of(bundle)) {
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
    state.unfrozen = 0;
    for (const int id : state.bundles) state.unfrozen += static_cast<int64_t>(bundles_[static_cast<size_t>(id)].flows.size());
  }
  for (const int id : component_bundles_) bundles_[static_cast<size_t>(id)].frozen = false;
  size_t unfrozen_bundles = component_bundles_.size();
  double level = 0;
  while (unfrozen_bundles > 0) {
    // Grow every unfrozen flow by the most the fullest link allows.
    double step = std::numeric_limits<double>::infinity();
    int bottleneck = -1;
    for (int link : component_links_) {
      const LinkState& state = links_[static_cast<size_t>(link)];
      if (state.unfrozen == 0) continue;
      const double share = state.residual / static_cast<double>(state.unfrozen);
      if (share < step) {
        step = share;
        bottleneck = link;
      }
    }
    SPLITSCOPE_CHECK(bottleneck >= 0, "unfrozen flows on no link");
    level += step;
    for (int link : component_links_) {
      LinkState& state = links_[static_cast<size_t>(link)];
      if (state.unfrozen > 0) state.residual -= step * static_cast<double>(state.unfrozen);
    }
    links_[static_cast<size_t>(bottleneck)].residual = 0;
    // Freeze the flows on every link that is now full.
    for (int link : component_links_) {
      LinkState& state = links_[static_cast<size_t>(link)];
      if (state.unfrozen == 0 || state.residual > kFullFraction * state.capacity) continue;
      for (const int id : state.bundles) {
        Bundle& bundle = bundles_[static_cast<size_t>(id)];
        if (bundle.frozen) continue;
        bundle.frozen = true;
        bundle.next_rate = level;
        --unfrozen_bundles;
        const auto flows = static_cast<int64_t>(bundle.flows.size());
        for (const int crossed : links_of(bundle)) links_[static_cast<size_t>(crossed)].unfrozen -= flows;
      }
    }
  }
}

}  // namespace splitscope
