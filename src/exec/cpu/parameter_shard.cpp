#include "exec/cpu/parameter_shard.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "exec/cpu/kernels/optimizer_step.hpp"
#include "util/check.hpp"

namespace splitscope {

ParameterShard::ParameterShard(const ParameterServerOptions& options, int workers, int index, int device,
                               const Optimizer& optimizer, int64_t batch)
    : index_(index),
      device_(device),
      optimizer_(optimizer),
      batch_(batch),
      ledger_(options, workers) {}

void ParameterShard::hold(int set, const WeightSlice& initial) {
  weight_sets_.push_back(set);
  master_.push_back(initial);
  const auto floats = static_cast<size_t>(initial.bytes() / 4);
  state_.emplace_back(floats * static_cast<size_t>(optimizer_.state_per_param()), 0.0f);
  sum_.emplace_back(floats, 0.0f);
  gradient_floats_ += static_cast<int64_t>(floats);
}

GradientVerdict ParameterShard::offer(int pulled, int64_t rows, std::span<const float> gradient,
                                      const std::function<double()>& now_us) {
  SPLITSCOPE_CHECK(static_cast<int64_t>(gradient.size()) == gradient_floats_,
                   "a gradient message of another size than the shard's weights");
  const GradientVerdict verdict = ledger_.offer(pulled);
  if (!verdict.accepted) {
    ++tally_.dropped;
    return verdict;
  }
  tally_.taken(verdict.staleness, rows);
  const float* from = gradient.data();
  for (std::vector<float>& sum : sum_) {
    for (float& s : sum) s += *from++;
  }
  sum_rows_ += rows;
  lr_scale_ = verdict.lr_scale;
  if (verdict.completes) apply(now_us);
  return verdict;
}

void ParameterShard::apply(const std::function<double()>& now_us) {
  const double start = now_us();
  const auto mean = static_cast<float>(static_cast<double>(batch_) / static_cast<double>(sum_rows_));
  const OptimizerStep step = optimizer_step(optimizer_, optimizer_.learning_rate * lr_scale_, ledger_.version() + 1);
  int64_t weights = 0;
  SerialFor serial;
  for (size_t i = 0; i < master_.size(); ++i) {
    std::vector<float>& sum = sum_[i];
    for (float& g : sum) g *= mean;
    float* state = state_[i].empty() ? nullptr : state_[i].data();
    apply_optimizer_step(serial, step, master_[i].tensors, sum.data(), state);
    std::fill(sum.begin(), sum.end(), 0.0f);
    weights += static_cast<int64_t>(sum.size());
  }
  sum_rows_ = 0;
  lr_scale_ = 1.0;
  ledger_.applied();
  Span span;
  span.device = device_;
  span.lane = Lane::kCompute;
  span.kind = SpanKind::kCompute;
  span.label = fmt::format("shard {} update {}", index_, ledger_.version());
  span.start_us = start;
  span.end_us = now_us();
  span.flops = optimizer_.update_flops(weights);
  spans_.push_back(span);
  tally_.update_ends_us.push_back(span.end_us);
}

ShardTally ParameterShard::tally() const {
  ShardTally tally = tally_;
  for (const WeightSlice& slice : master_) tally.bytes += slice.bytes();
  return tally;
}

}  // namespace splitscope
