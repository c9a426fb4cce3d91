#pragma once
/// \file
/// Transfers in flight sharing links. Each flow drains its bytes over the
/// links of its route; flows crossing a common link split its bandwidth by
/// max-min fairness (progressive filling: every flow's rate grows equally
/// until some link is full, the flows on that link are frozen, and the rest go
/// on growing), so k flows through one bus each get 1/k of it, and a flow held
/// back elsewhere leaves its share to the others. Rates are recomputed when a
/// flow starts or finishes (or once for all that joined and left at one
/// instant: settle()), over the flows that (transitively) share links with
/// it, and nowhere else, which keeps a large simulation fast.

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/machine/topology.hpp"

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

  /// start() and finish() whose changes to the rates of the flows they meet
  /// wait for settle() (a flow that starts alone gets its rate at once): the
  /// owner calls settle() before its clock moves past `now`, so that the
  /// starts and finishes of one instant (a fat tree's step groups ending and
  /// starting together on a shared uplink) reshare their links once, not
  /// once each. start() and finish() are these and a settle().
  FlowId join(double now, std::span<const int> links, double bytes);
  void leave(FlowId flow);
  /// Whether joins or leaves wait for settle().
  bool unsettled() const { return !pending_seeds_.empty(); }
  /// Recomputes the rates of every flow connected to the links of the joins
  /// and leaves since the last settle(), component by component; rescheduled()
  /// then lists the flows whose finish time changed and those that joined.
  void settle(double now);

  /// Flows whose finish time changed in the last start(), finish(), join(),
  /// leave() or settle(), including a flow just started; their owners must
  /// reschedule them.
  const std::vector<FlowId>& rescheduled() const { return rescheduled_; }

  /// Whether no flow crosses `link` now.
  bool idle(int link) const { return links_.at(static_cast<size_t>(link)).flows.empty(); }
  /// The rate a flow over `links` gets while no other flow crosses them (the
  /// slowest link, a link crossed k times giving 1/k): what start() gives it.
  double alone_rate(std::span<const int> links) const;

  double rate(FlowId flow) const { return flows_.at(static_cast<size_t>(flow)).rate; }
  double finish_time(FlowId flow) const { return flows_.at(static_cast<size_t>(flow)).finish; }
  size_t active_flows() const { return active_; }
  /// Components whose rates were recomputed so far: one per shared start()
  /// or finish(), one per connected part of a settle()'s links.
  size_t reshares() const { return reshares_; }

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
    bool fresh = false;     ///< started, its rate not yet set by settle()
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

  /// Recomputes the rates of the component gather_component() found.
  void reshare(double now);
  /// The flows and links connected to `seed` (marked with the current epoch).
  void gather_component(int seed);
  void fill_fair_shares();

  std::vector<Flow> flows_;
  std::vector<FlowId> free_;
  std::vector<LinkState> links_;
  size_t active_ = 0;
  size_t reshares_ = 0;
  uint32_t epoch_ = 0;
  std::vector<int> component_links_;
  std::vector<FlowId> component_flows_;
  std::vector<FlowId> rescheduled_;
  std::vector<std::vector<int>> wide_links_;  ///< groups' links, by slot
  std::vector<int> free_wide_;                ///< slots of wide_links_ no flow holds
  std::vector<int> pending_seeds_;            ///< links of the joins and leaves not yet settled
  mutable std::vector<int> crossings_;        ///< alone_rate()'s count per link, all 0 between calls
};

}  // namespace splitscope
