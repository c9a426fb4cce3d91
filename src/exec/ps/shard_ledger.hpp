#pragma once
/// \file
/// The bookkeeping of one parameter-server shard: its version (updates
/// applied), which gradients it takes into the next update and which it
/// drops, each one's staleness, and when a worker must wait before pulling
/// again. Pure rules, shared by the cpu backend's shard threads and the
/// simulator's shard events, so both run the same protocol.

#include <limits>

#include "exec/parameter_server.hpp"

namespace splitscope {

struct GradientVerdict {
  bool accepted = false;
  bool completes = false;  ///< accepted, and the update it belongs to can now be applied
  int staleness = 0;       ///< updates applied since its worker pulled
  double lr_scale = 1.0;   ///< the learning rate's factor for this gradient's update
};

class ShardLedger {
 public:
  ShardLedger(const ParameterServerOptions& options, int workers);

  /// Updates applied so far: the version of the weights a pull gets.
  int version() const { return version_; }
  /// No update is left to apply (sync and spare: all steps done; async never: its workers stop).
  bool finished() const { return version_ >= limit_; }
  /// Whether the update from `version` aggregates several gradients (sync,
  /// spare, async warm-up) rather than applying one.
  bool aggregates(int version) const;
  /// Gradients the update from `version` takes.
  int needed(int version) const;
  /// A gradient computed on the weights of version `pulled` arrives.
  GradientVerdict offer(int pulled);
  /// The update the last completing gradient closed has been applied.
  void applied();
  /// Whether a worker that pulled version `pulled` and has pushed its
  /// gradient must wait for a newer version before it pulls again.
  bool worker_waits(int pulled) const { return !finished() && aggregates(pulled) && version_ == pulled; }

 private:
  ParameterServerOptions options_;
  int workers_;
  int limit_ = std::numeric_limits<int>::max();
  int version_ = 0;
  int pending_ = 0;  ///< gradients taken into the update being aggregated
};

}  // namespace splitscope
