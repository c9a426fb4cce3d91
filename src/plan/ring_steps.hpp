#pragma once
/// \file
/// A ring collective as its steps, not its sends: what a simulator needs to
/// play the ring one step at a time, in O(participants) memory, where
/// collective_schedule.hpp lists every one of its N·steps sends.
///
/// In every step of a ring (all-gather, all-reduce, reduce-scatter:
/// collective_schedule.hpp) each participant i sends one piece to i+1: the
/// step's N sends are the same shape, participant by participant. They
/// carry the same bytes where the pieces are even (an all-reduce of E
/// elements with N dividing E; an all-gather of equal slices); otherwise
/// some pieces are one element (or one channel) longer. `send_bytes` is the
/// largest: a ring's last step ends along the chain of the largest pieces
/// (each piece travels one participant further a step), so pricing every
/// send at the largest gives the time of the last delivery exactly and the
/// others a few bytes' time late (docs/collective.md, "Step groups").
///
/// The deliveries are collective_schedule()'s, with the same bytes received
/// (closed forms below, checked against the schedule by tests), but no wait
/// counts: in steps, every delivery completes with the last step.
///   all-gather:     participant r receives every slice but its own;
///   all-reduce:     2E − chunk(r) − chunk(r+1) elements (its reduce-scatter
///                   half brings every chunk but chunk r, its all-gather half
///                   every chunk but chunk r+1);
///   reduce-scatter: every chunk but chunk r−1.

#include <cstdint>
#include <optional>
#include <vector>

#include "plan/collective_schedule.hpp"
#include "plan/plan.hpp"

namespace splitscope {

struct RingSteps {
  int steps = 0;             ///< 2(N-1) for an all-reduce, N-1 for an all-gather or reduce-scatter
  int64_t send_bytes = 0;    ///< the largest send of any step
  bool even = true;          ///< every send of every step carries send_bytes
  int segments = 1;          ///< values each participant holds (a gradient bucket's segments)
  /// One per participant, in op.outputs order (one per `segments` outputs),
  /// with collective_schedule()'s device, value, local copy, bytes received
  /// and first element; waits_for is 0.
  std::vector<CollectiveDelivery> deliveries;
};

/// The steps of ring collective `op` of `plan` (an all-gather, all-reduce or
/// reduce-scatter with at least two participants, shaped as
/// collective_schedule() requires); nullopt for every other op.
std::optional<RingSteps> ring_steps(const Plan& plan, const PlanOp& op);

}  // namespace splitscope
