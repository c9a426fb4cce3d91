#pragma once
/// \file
/// What a training step optimises, and how: the loss and the optimizer. A
/// training graph (training.hpp) carries it, so that the partitioners can
/// place the optimizer's updates and count its state.

#include <cstdint>
#include <string_view>

#include "ir/op_attrs.hpp"
#include "ir/precision.hpp"

namespace splitscope {

enum class OptimizerKind {
  kSgd,   ///< SGD with momentum (momentum 0: plain SGD)
  kAdam,  ///< Adam (Kingma & Ba), β1 0.9, β2 0.999, ε 1e-8, bias-corrected
};

struct Optimizer {
  OptimizerKind kind = OptimizerKind::kSgd;
  double learning_rate = 0.01;
  double momentum = 0.9;  ///< SGD only
  static constexpr double kBeta1 = 0.9;
  static constexpr double kBeta2 = 0.999;
  static constexpr double kEpsilon = 1e-8;

  bool adam() const { return kind == OptimizerKind::kAdam; }
  /// Floats of optimizer state per parameter: Adam's two moments, SGD's
  /// momentum buffer (none without momentum).
  int state_per_param() const { return adam() ? 2 : momentum != 0.0 ? 1 : 0; }
  /// "sgd", "sgd+momentum" or "adam".
  std::string_view name() const { return adam() ? "adam" : momentum != 0.0 ? "sgd+momentum" : "sgd"; }
  /// The cost of one update of n weights. SGD with momentum: v = μv + g,
  /// w -= lr·v (4 FLOPs; reads w, g, v; writes w, v); without: w -= lr·g (2
  /// FLOPs; reads w, g; writes w). Adam: m = β1·m + (1-β1)·g, v = β2·v +
  /// (1-β2)·g², w -= lr·m̂ / (√v̂ + ε) with m̂, v̂ bias-corrected (14 FLOPs,
  /// the square root counted as one; reads w, g, m, v; writes w, m, v).
  int64_t update_flops(int64_t n) const { return (adam() ? 14 : momentum != 0.0 ? 4 : 2) * n; }
  int64_t update_bytes_read(int64_t n) const { return (2 + state_per_param()) * n * 4; }
  int64_t update_bytes_written(int64_t n) const { return (1 + state_per_param()) * n * 4; }
  /// The same at `storage` (ir/precision.hpp): the gradient at its size, the
  /// weights updated (the fp32 masters where there are some) and the state at
  /// theirs. Mixed precision then casts the updated masters to the copy the
  /// products read: one more read of the masters and a write of the copy,
  /// counted here as the memory pass it is.
  int64_t update_bytes_read(int64_t n, const StorageBytes& storage) const {
    const int64_t updated = storage.casts_weights() ? storage.master : storage.weight;
    return n * (storage.gradient + updated + state_per_param() * storage.optimizer_state +
                (storage.casts_weights() ? storage.master : 0));
  }
  int64_t update_bytes_written(int64_t n, const StorageBytes& storage) const {
    const int64_t updated = storage.casts_weights() ? storage.master : storage.weight;
    return n * (updated + state_per_param() * storage.optimizer_state + (storage.casts_weights() ? storage.weight : 0));
  }
};

struct TrainingSpec {
  LossKind loss = LossKind::kMeanSquaredError;
  Optimizer optimizer;
};

std::string_view to_string(LossKind loss);

}  // namespace splitscope
