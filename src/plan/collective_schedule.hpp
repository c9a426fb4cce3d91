#pragma once
/// \file
/// A collective op as the point-to-point sends of the algorithm its plan op
/// names (PlanOp::algorithm): the one description that the simulator prices
/// and that the cpu and cuda executors run as real copies, so a measured
/// collective and a predicted one move the same bytes between the same
/// devices in the same order.
///
/// - Ring all-gather over N participants: N-1 steps; in step s participant i
///   forwards the slice that started at participant i-s to participant i+1
///   (step 0 from its input, later steps from its output, where the slice
///   arrived). Each participant copies its own slice into its output locally.
/// - Ring all-reduce of E elements: the tensor is cut into N chunks of E/N
///   elements (the first E mod N one element longer); reduce-scatter then
///   all-gather, 2(N-1) steps. In reduce-scatter step s participant i sends
///   chunk i-s (from its input at s = 0, else from its output) to i+1, which
///   writes its own input's chunk plus what arrived into its output; in the
///   all-gather steps the fully reduced chunks travel on and are stored as
///   they are. Every participant receives 2(N-1)/N of the tensor; every
///   element of every output is written by some receive; every copy of the
///   result is the same to the bit (each chunk is summed once, then copied).
///   This is NCCL's ring algorithm (docs: "NCCL collective operations";
///   nccl-tests PERFORMANCE.md: busbw = algbw · 2(N-1)/N).
///   A bucketed all-reduce (plan/gradient_all_reduce.hpp) holds
///   several values per participant, its segments (op.inputs and op.outputs
///   participant-major: participant p's segment k at p·S + k): the ring runs
///   over their concatenation, so a chunk may span segments (pieces()).
/// - Ring reduce-scatter: N-1 steps; in step s participant i sends chunk
///   i-s-1 (participant p's chunk is its output's channels, of every row) to i+1, which
///   stores its own input's chunk plus what arrived: in its staging (a
///   participant's scratch copy of the whole tensor) until the last step,
///   which lands chunk i+1 in participant i+1's output. Every participant
///   receives (N-1)/N of the tensor.
/// - Ring broadcast: the root (participants[0]) cuts its tensor into chunks
///   of at most kBroadcastChunkBytes; each chunk travels the ring root ->
///   participant 1 -> ... -> participant N-1, a participant forwarding a
///   chunk from its output once it has arrived, one send at a time, so the
///   chunks pipeline: (K + N - 2) steps of a chunk for K chunks. The root
///   copies its own locally.
/// - Direct concat: every participant other than the root sends its slice
///   straight to the root, all at once; the root copies its own locally.
///
/// When a send may start: after the data it carries exists (the sender's
/// input, every segment of it, for a first step, else the send that brought it), after the
/// sender's previous send (one send at a time per participant), and, for a
/// reducing send, after the receiver's own input exists (a rank joins a
/// collective only once its input is computed). A delivery (one output
/// value) is complete when every send into it, and its local copy, is done.

#include <array>
#include <cstdint>
#include <vector>

#include "ir/range.hpp"
#include "plan/plan.hpp"

namespace splitscope {

/// The sends that wait for one send: at most two (in a ring, the
/// receiver's next send, which forwards what it brought, and the sender's
/// own next send; none in a direct concat). Fixed room, because a plan
/// evaluated many times a second builds thousands of these.
class NextSends {
 public:
  void push_back(int send);
  const int* begin() const { return sends_.data(); }
  const int* end() const { return sends_.data() + count_; }
  size_t size() const { return static_cast<size_t>(count_); }

 private:
  std::array<int, 2> sends_{};
  int count_ = 0;
};

struct CollectiveSend {
  int from = 0;          ///< participant slot sending (index into op.participants; its inputs: segments())
  int from_device = 0;
  int to_device = 0;
  int delivers_to = -1;  ///< the delivery (index into op.outputs) it writes into
  int touches_from = -1; ///< the sender's own delivery, if the sender has an output; -1 for none
  int64_t bytes = 0;

  // What moves.
  int slice = -1;        ///< gathers: the participant slot whose input slice it carries; -1 for a chunk
  Range elements;        ///< all-reduce: the chunk, as element offsets into the segments' concatenation
  bool from_input = false;  ///< read from the sender's input value; else from its output value (or staging)
  bool reduces = false;     ///< the receiver stores its own input's chunk plus the data; else the data
  bool from_staging = false;  ///< reduce-scatter: read from the sender's staging
  bool to_staging = false;    ///< reduce-scatter: written into the receiver's staging, not its output

  // When it may start: `waits_for` counts the sends of which it is in `then`,
  // plus one for each input slot below.
  int waits_for = 0;
  int needs_input = -1;           ///< the sender's input slot whose value must exist; -1 for none
  int needs_receiver_input = -1;  ///< the receiver's input slot (reducing sends); -1 for none
  NextSends then;                 ///< sends that wait for this one
};

/// One participant's output of the collective (the value of each segment):
/// where it is, and what it waits for.
struct CollectiveDelivery {
  int device = 0;
  int value = -1;       ///< its first segment's value (op.outputs[slot·S]); the others follow it in op.outputs
  int local_copy = -1;  ///< the participant slot whose input is copied into the output on its own device; -1 for none
  int waits_for = 0;    ///< sends into it, plus one for each segment of the local copy's input
  int64_t bytes_received = 0;  ///< what its span's bytes are (docs: a collective's span bytes)
  /// The element of the tensor at its output's first element (a
  /// reduce-scatter's chunk starts past 0; every other output holds it all).
  int64_t first_element = 0;
};

/// Part of an all-reduce chunk that lies in one segment.
struct SegmentPiece {
  int segment = 0;
  Range elements;      ///< within the segment's value
  int64_t offset = 0;  ///< of its first element from the chunk's first
};

struct CollectiveSchedule {
  std::vector<CollectiveSend> sends;
  std::vector<CollectiveDelivery> deliveries;  ///< in participant order (op.outputs order, one per S outputs)
  /// For each input value (op.inputs index): the sends and the deliveries (local copies) waiting for it.
  std::vector<std::vector<int>> sends_needing_input;
  std::vector<std::vector<int>> deliveries_needing_input;
  /// Values each participant holds, S (1 but for a bucketed all-reduce).
  int segments = 1;
  /// Sends by element (all-reduce, reduce-scatter, broadcast): where each
  /// segment starts in the concatenation, and its end (S + 1 offsets, in elements).
  std::vector<int64_t> segment_starts;
  /// Reduce-scatter: every participant needs a staging copy of the whole tensor.
  bool staged = false;
  /// Reduce-scatter of a tensor of several rows (sequence parallelism's
  /// [B, T, H], cut along T): a chunk is a range of each row's channels, so
  /// a send's `elements` (offsets within one row) repeat in each of `rows`
  /// rows, `row_elements` apart in the inputs and the staging copies; a
  /// delivery's output holds its chunk of every row end to end
  /// ([rows][chunk]), its `first_element` the chunk's offset within a row.
  /// 1 and 0 for every other collective.
  int64_t rows = 1;
  int64_t row_elements = 0;

  /// The op.inputs (or op.outputs) index of participant `slot`'s segment `segment`.
  int index(int slot, int segment) const { return slot * segments + segment; }
  /// The pieces of all-reduce chunk `elements`, in order.
  std::vector<SegmentPiece> pieces(Range elements) const;
};

/// The sends of collective op `op` of `plan` under its algorithm. Throws
/// std::logic_error for a malformed op or an algorithm its kind cannot use.
CollectiveSchedule collective_schedule(const Plan& plan, const PlanOp& op);

/// A broadcast's largest chunk: NCCL's ring step (NCCL_BUFFSIZE 4 MiB over
/// NCCL_STEPS 8, the Simple protocol's defaults), the unit its ring pipelines.
inline constexpr int64_t kBroadcastChunkBytes = int64_t{512} << 10;

/// The algorithm the partitioners choose for `kind` today (ring for all-gather,
/// all-reduce, reduce-scatter and broadcast, direct for concat).
CollectiveAlgorithm default_algorithm(CollectiveKind kind);

/// Whether `algorithm` can carry out a collective of `kind`.
bool algorithm_fits(CollectiveKind kind, CollectiveAlgorithm algorithm);

}  // namespace splitscope
