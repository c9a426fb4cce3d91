#include "exec/ps/shard_ledger.hpp"

#include "util/check.hpp"

namespace splitscope {

ShardLedger::ShardLedger(const ParameterServerOptions& options, int workers) : options_(options), workers_(workers) {
  SPLITSCOPE_CHECK(workers >= 1, "a shard with no workers");
  if (options.mode != PsMode::kAsync) limit_ = options.steps;
}

bool ShardLedger::aggregates(int version) const {
  return options_.mode != PsMode::kAsync || version < options_.sync_warmup;
}

int ShardLedger::needed(int version) const {
  if (!aggregates(version)) return 1;
  return options_.mode == PsMode::kSpare ? workers_ - options_.spare : workers_;
}

GradientVerdict ShardLedger::offer(int pulled) {
  SPLITSCOPE_CHECK(pulled <= version_, "a gradient of weights the shard never had");
  GradientVerdict verdict;
  verdict.staleness = version_ - pulled;
  if (finished()) return verdict;  // the run is over: late work is dropped
  if (aggregates(version_)) {
    // A step's update takes gradients of that step's weights only: one
    // pulled before is late (its step was applied without it: spare).
    if (pulled != version_) return verdict;
    verdict.accepted = true;
    verdict.completes = ++pending_ == needed(version_);
    return verdict;
  }
  if (options_.max_staleness && verdict.staleness > *options_.max_staleness) return verdict;
  verdict.accepted = true;
  verdict.completes = true;
  if (options_.staleness_scaled_lr) verdict.lr_scale = 1.0 / (1.0 + verdict.staleness);
  return verdict;
}

void ShardLedger::applied() {
  ++version_;
  pending_ = 0;
}

}  // namespace splitscope
