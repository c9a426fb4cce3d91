#pragma once
/// \file
/// Collectives as point-to-point sends, the way NCCL's ring algorithms run
/// them, so that each send pays latency + bytes / bandwidth on the links of
/// its route:
/// - all-gather over N participants: N-1 ring steps; in step s participant i
///   forwards the slice that started at participant i-s to participant i+1.
/// - all-reduce of B bytes: reduce-scatter then all-gather, 2(N-1) ring steps
///   each moving a chunk of B/N, so that every participant receives
///   2(N-1)/N·B; on links of bandwidth W and latency L that takes
///   2(N-1)/N·B/W + 2(N-1)·L.
/// - concat: every participant other than the root sends its slice to the
///   root, all at once (they share the root's incoming link).
/// A ring send waits for the data it forwards (the previous step's send into
/// its participant) and for its participant's previous send (one send at a
/// time per participant); step 0 waits for the participant's input. The
/// element-wise additions of the reduction are not priced (they run inside
/// the copy kernels, at memory speed).

#include <cstdint>
#include <vector>

#include "partitioners/plan.hpp"

namespace splitscope {

struct CollectiveSend {
  int from_device = 0;
  int to_device = 0;
  int64_t bytes = 0;
  /// Preconditions: the sends listed in `then` of others, plus the input below.
  int waits_for = 0;
  int needs_input = -1;    ///< participant slot whose input must exist first; -1 for none
  std::vector<int> then;   ///< sends that wait for this one
  int delivers_to = -1;    ///< the delivery it brings data to
  int touches_from = -1;   ///< the delivery of the sending device, if it is an output device
};

/// One output value of the collective: where it is, and what it waits for.
struct CollectiveDelivery {
  int device = 0;
  int value = -1;
  int own_input = -1;  ///< participant slot of the data already on `device`; -1 for none
  int waits_for = 0;   ///< receives + (own_input >= 0)
  int64_t bytes_received = 0;
};

struct CollectiveSchedule {
  std::vector<CollectiveSend> sends;
  std::vector<CollectiveDelivery> deliveries;  ///< in op.outputs order
  /// For each participant slot: the sends and the deliveries waiting for its input.
  std::vector<std::vector<int>> sends_needing_input;
  std::vector<std::vector<int>> deliveries_needing_input;
};

/// The sends of a collective op of `plan` (op.role == kCollective).
CollectiveSchedule decompose_collective(const Plan& plan, const PlanOp& op);

}  // namespace splitscope
