#include "exec/ps/shard_tally.hpp"

#include <algorithm>

#include "exec/ps/shard_ledger.hpp"
#include "util/check.hpp"

namespace splitscope {
namespace {

std::vector<double> step_ends(const ParameterServerOptions& options, int workers, const ShardTally& shard) {
  const ShardLedger rules(options, workers);
  std::vector<double> ends;
  int in_step = 0;
  for (size_t v = 0; v < shard.update_ends_us.size(); ++v) {
    if (rules.aggregates(static_cast<int>(v)) || ++in_step == workers) {
      ends.push_back(shard.update_ends_us[v]);
      in_step = 0;
    }
  }
  if (in_step > 0) ends.push_back(shard.update_ends_us.back());
  return ends;
}

std::string mitigations(const ParameterServerOptions& options) {
  std::vector<std::string> in_force;
  if (options.sync_warmup > 0) in_force.push_back("first " + std::to_string(options.sync_warmup) + " steps synchronous");
  if (options.max_staleness) {
    in_force.push_back("gradients staler than " + std::to_string(*options.max_staleness) + " dropped");
  }
  if (options.staleness_scaled_lr) in_force.push_back("lr / (1 + staleness)");
  if (in_force.empty()) return "none";
  std::string text;
  for (const std::string& one : in_force) text += (text.empty() ? "" : ", ") + one;
  return text;
}

}  // namespace

void ShardTally::taken(int stale, int64_t rows) {
  const auto index = static_cast<size_t>(stale);
  if (staleness.size() <= index) staleness.resize(index + 1, 0);
  ++staleness[index];
  ++applied;
  applied_rows += rows;
}

ParameterServerSummary summarize_shards(const ParameterServerOptions& options, int workers,
                                        const std::vector<ShardTally>& shards, int64_t pushed) {
  SPLITSCOPE_CHECK(!shards.empty(), "a parameter-server run without shards");
  ParameterServerSummary summary;
  for (size_t k = 0; k < shards.size(); ++k) {
    const std::vector<double> mine = step_ends(options, workers, shards[k]);
    if (k == 0) {
      summary.window_ends = mine;
      continue;
    }
    summary.window_ends.resize(std::min(summary.window_ends.size(), mine.size()));
    for (size_t s = 0; s < summary.window_ends.size(); ++s) {
      summary.window_ends[s] = std::max(summary.window_ends[s], mine[s]);
    }
  }
  ParameterServerInfo& info = summary.info;
  info.mode = std::string(to_string(options.mode));
  info.workers = workers;
  info.shards = static_cast<int>(shards.size());
  info.spare = options.spare;
  info.updates = static_cast<int>(shards.front().update_ends_us.size());
  int64_t staleness_sum = 0;
  for (const ShardTally& shard : shards) {
    info.updates = std::min(info.updates, static_cast<int>(shard.update_ends_us.size()));
    info.gradients_applied += shard.applied;
    info.gradients_dropped += shard.dropped;
    if (info.staleness_histogram.size() < shard.staleness.size()) info.staleness_histogram.resize(shard.staleness.size());
    for (size_t s = 0; s < shard.staleness.size(); ++s) {
      info.staleness_histogram[s] += shard.staleness[s];
      staleness_sum += static_cast<int64_t>(s) * shard.staleness[s];
      if (shard.staleness[s] > 0) info.staleness_max = std::max(info.staleness_max, static_cast<int>(s));
    }
    info.shard_bytes.push_back(shard.bytes);
  }
  info.gradients_pushed = pushed;
  if (info.gradients_applied > 0) {
    info.staleness_mean = static_cast<double>(staleness_sum) / static_cast<double>(info.gradients_applied);
  }
  if (!summary.window_ends.empty()) {
    info.wall_us = summary.window_ends.back();
    info.applied_samples_per_s = static_cast<double>(shards.front().applied_rows) / (info.wall_us * 1e-6);
  }
  info.mitigations = mitigations(options);
  return summary;
}

}  // namespace splitscope
