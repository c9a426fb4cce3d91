#pragma once
/// \file
/// What a training step optimises, and how: the loss and the optimizer. A
/// training graph (training.hpp) carries it, so that the partitioners can
/// place the optimizer's updates and count its state.

#include <cstdint>
#include <string_view>

#include "ir/op_attrs.hpp"

namespace splitscope {

enum class OptimizerKind {
  kSgd,  ///< SGD with momentum (momentum 0: plain SGD)
};

struct Optimizer {
  OptimizerKind kind = OptimizerKind::kSgd;
  double learning_rate = 0.01;
  double momentum = 0.9;

  /// Floats of optimizer state per parameter (the momentum buffer; 0 without momentum).
  int state_per_param() const { return momentum != 0.0 ? 1 : 0; }
  /// "sgd" or "sgd+momentum".
  std::string_view name() const { return momentum != 0.0 ? "sgd+momentum" : "sgd"; }
  /// The cost of one update of n weights: with momentum v = μv + g,
  /// w -= lr·v (4 FLOPs; reads w, g, v; writes w, v), without w -= lr·g
  /// (2 FLOPs; reads w, g; writes w).
  int64_t update_flops(int64_t n) const { return (momentum != 0.0 ? 4 : 2) * n; }
  int64_t update_bytes_read(int64_t n) const { return (momentum != 0.0 ? 3 : 2) * n * 4; }
  int64_t update_bytes_written(int64_t n) const { return (momentum != 0.0 ? 2 : 1) * n * 4; }
};

struct TrainingSpec {
  LossKind loss = LossKind::kMeanSquaredError;
  Optimizer optimizer;
};

std::string_view to_string(LossKind loss);

}  // namespace splitscope
