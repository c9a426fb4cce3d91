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
///
/// Flows over the same links always get the same rate (max-min fairness
/// treats them alike), so they move as one bundle: the links list the
/// bundle once per crossing, weighted by its flows. A flow of a link set
/// (link_set(): a ring step group's thousands of links) that joins or
/// leaves others over the same set, where nothing else crosses its links,
/// is repriced in O(the set's flows) instead of O(its links): the bucket
/// all-reduces of a data-parallel step over 16,384 devices overlap on one
/// ring, step after step.

#include <array>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/machine/topology.hpp"

namespace splitscope {

class FlowNetwork {
 public:
  using FlowId = int;
  using LinkSetId = int;

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
  /// The id of `links` (listed alike: the same ids in the same order) as a
  /// link set, registered on first use; its flows join by id, without a
  /// pass over the links while others over the same set run. A join() of
  /// more than kMaxRouteLinks links registers them.
  LinkSetId link_set(std::span<const int> links);
  FlowId join(double now, LinkSetId set, double bytes);
  void leave(FlowId flow);
  /// Whether joins or leaves wait for settle().
  bool unsettled() const { return !pending_seeds_.empty() || !pending_bundles_.empty(); }
  /// Recomputes the rates of every flow connected to the links of the joins
  /// and leaves since the last settle(), component by component; rescheduled()
  /// then lists the flows whose finish time changed and those that joined.
  void settle(double now);

  /// Flows whose finish time changed in the last start(), finish(), join(),
  /// leave() or settle(), including a flow just started; their owners must
  /// reschedule them.
  const std::vector<FlowId>& rescheduled() const { return rescheduled_; }

  /// Whether no flow crosses `link` now.
  bool idle(int link) const { return links_.at(static_cast<size_t>(link)).bundles.empty(); }
  /// The rate a flow over `links` gets while no other flow crosses them (the
  /// slowest link, a link crossed k times giving 1/k): what start() gives it.
  double alone_rate(std::span<const int> links) const;
  /// The same for a link set's links, kept since it was registered.
  double alone_rate(LinkSetId set) const { return sets_.at(static_cast<size_t>(set)).alone_rate; }

  double rate(FlowId flow) const { return flows_.at(static_cast<size_t>(flow)).rate; }
  double finish_time(FlowId flow) const { return flows_.at(static_cast<size_t>(flow)).finish; }
  size_t active_flows() const { return active_; }
  /// Components whose rates were recomputed so far: one per shared start()
  /// or finish(), one per connected part of a settle()'s links.
  size_t reshares() const { return reshares_; }

 private:
  struct Flow {
    int bundle = -1;
    double remaining = 0;   ///< bytes left at `updated_at`
    double rate = 0;        ///< bytes per second
    double updated_at = 0;
    double finish = 0;
    bool fresh = false;     ///< started, its rate not yet set by settle()
    bool active = false;
  };
  /// Flows over the same links: one flow's route, or a link set's flows.
  struct Bundle {
    std::array<int, kMaxRouteLinks> links{};
    int link_count = 0;
    int set = -1;                ///< a link set's: index into sets_; -1 for a route's (`links`)
    std::vector<FlowId> flows;   ///< in the order they joined, as a link lists its bundles
    double next_rate = 0;        ///< scratch for the fair-share computation
    uint32_t mark = 0;           ///< component search epoch
    bool frozen = false;
    bool pending = false;        ///< in pending_bundles_
    /// A link set's: the pairs (one of its crossings, another bundle's on
    /// the same link); 0 where it has its links to itself.
    int64_t foreign = 0;
  };
  struct LinkSet {
    std::vector<int> links;
    int bundle = -1;  ///< the bundle of its flows; -1 while none runs
    double alone_rate = 0;
    /// The (capacity, crossings) of the links whose capacity / crossings is
    /// the set's smallest, distinct: w flows alone on the set each get the
    /// smallest capacity / (crossings · w) of these, as progressive filling
    /// computes it.
    std::vector<std::pair<double, int>> bottlenecks;
  };
  struct LinkState {
    double capacity = 0;
    std::vector<int> bundles;  ///< one entry per crossing
    int set_entries = 0;       ///< entries of link sets' bundles
    double residual = 0;
    int64_t unfrozen = 0;      ///< flows not yet frozen, one per crossing
    uint32_t mark = 0;
  };

  std::span<const int> links_of(const Bundle& bundle) const;
  int new_bundle();
  FlowId new_flow(double now, double bytes, int bundle);
  /// Lists `bundle` on its links; whether it found them empty.
  bool enter_links(int bundle);
  /// Takes `bundle` off its links; whether another still crosses one of them.
  bool leave_links(int bundle);
  void mark_pending(int bundle);

  /// Recomputes the rates of the component gather_component() found.
  void reshare(double now);
  /// The bundles and links connected to `seed` (marked with the current epoch).
  void gather_component(int seed);
  void fill_fair_shares();
  /// A link set's bundle that has its links to itself: every flow gets the
  /// set's bottleneck share, as reshare() would give it.
  void reshare_alone(int bundle, double now);
  void set_rates(const Bundle& bundle, double now);

  std::vector<Flow> flows_;
  std::vector<FlowId> free_;
  std::vector<Bundle> bundles_;
  std::vector<int> free_bundles_;
  std::vector<LinkSet> sets_;
  std::unordered_map<uint64_t, std::vector<LinkSetId>> sets_by_hash_;
  std::vector<LinkState> links_;
  size_t active_ = 0;
  size_t reshares_ = 0;
  uint32_t epoch_ = 0;
  std::vector<int> component_links_;
  std::vector<int> component_bundles_;
  std::vector<FlowId> rescheduled_;
  std::vector<int> pending_seeds_;            ///< links of the joins and leaves not yet settled
  std::vector<int> pending_bundles_;          ///< link sets' bundles whose flows changed, not yet settled
  mutable std::vector<int> crossings_;        ///< alone_rate()'s count per link, all 0 between calls
};

}  // namespace splitscope
