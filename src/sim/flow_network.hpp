#pragma once
/// \file
/// Transfers in flight sharing links. Each flow drains its bytes over the
/// links of its route; flows crossing a common link split its bandwidth by
/// max-min fairness (progressive filling: every flow's rate grows equally
/// until some link is full, the flows on that link are frozen, and the rest go
/// on growing), so k flows through one bus each get 1/k of it, and a flow held
/// back elsewhere leaves its share to the others. Rates are recomputed when a
/// flow starts or finishes, over the flows that (transitively) share links
/// with it, and nowhere else, which keeps a large simulation fast.

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/topology.hpp"

namespace splitscope {

class FlowNetwork {
 public:
  using FlowId = int;

  /// One capacity (bytes per second, > 0) per link id.
  explicit FlowNetwork(std::vector<double> link_bytes_per_second);

  /// Starts a flow of `bytes` (> 0) over `links` (at least one link id; a
  /// link listed twice carries the flow twice) at time `now`. A flow of more
  /// than kMaxRouteLinks links is a group of sends moving together (a ring
  /// step, ring_step_group.hpp): its rate is each send's, and it takes that
  /// rate from every link once per listing.
  FlowId start(double now, std::span<const int> links, double bytes);
  /// Takes a flow out at `now` (its finish time, or earlier to abort it).
  void finish(double now, FlowId flow);

  /// Flows whose finish time changed in the last start() or finish(),
  /// including a flow just started; their owners must reschedule them.
  const std::vector<FlowId>& rescheduled() const { return rescheduled_; }

  /// Whether no flow crosses `link` now.
  bool idle(int link) const { return links_.at(static_cast<size_t>(link)).flows.empty(); }
  /// The rate a flow over `links` gets while no other flow crosses them (the
  /// slowest link, a link crossed k times giving 1/k): what start() gives it.
  double alone_rate(std::span<const int> links) const;

  double rate(FlowId flow) const { return flows_.at(static_cast<size_t>(flow)).rate; }
  double finish_time(FlowId flow) const { return flows_.at(static_cast<size_t>(flow)).finish; }
  size_t active_flows() const { return active_; }

 private:
  struct Flow {
    std::array<int, kMaxRouteLinks> links{};
    int link_count = 0;
    int wide = -1;          ///< a group's links: index into wide_links_; -1 for a route's (`links`)
    double remaining = 0;   ///< bytes left at `updated_at`
    double rate = 0;        ///< bytes per second
    double updated_at = 0;
    double finish = 0;
    double next_rate = 0;   ///< scratch for the fair-share computation
    uint32_t mark = 0;      ///< component search epoch
    bool frozen = false;
    bool active = false;
  };
  struct LinkState {
    double capacity = 0;
    std::vector<FlowId> flows;  ///< one entry per crossing
    double residual = 0;
    int unfrozen = 0;
    uint32_t mark = 0;
  };

  std::span<const int> links_of(const Flow& flow) const;

  /// Recomputes the rates of every flow connected to `seeds` through shared links.
  void reshare(double now, std::span<const int> seeds, FlowId started);
  void gather_component(std::span<const int> seeds);
  void fill_fair_shares();

  std::vector<Flow> flows_;
  std::vector<FlowId> free_;
  std::vector<LinkState> links_;
  size_t active_ = 0;
  uint32_t epoch_ = 0;
  std::vector<int> component_links_;
  std::vector<FlowId> component_flows_;
  std::vector<FlowId> rescheduled_;
  std::vector<std::vector<int>> wide_links_;  ///< groups' links, by slot
  std::vector<int> free_wide_;                ///< slots of wide_links_ no flow holds
  std::vector<int> seeds_;                    ///< finish()'s copy of a finished flow's links
  mutable std::vector<int> crossings_;        ///< alone_rate()'s count per link, all 0 between calls
};

}  // namespace splitscope
