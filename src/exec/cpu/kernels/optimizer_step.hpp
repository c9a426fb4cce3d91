#pragma once
/// \file
/// The optimizer's step over a run of weights (ir/training_spec.hpp gives the
/// equations): the update op of a plan and a parameter-server shard apply it
/// alike.

#include <cstdint>
#include <vector>

#include "exec/cpu/kernels/parallel_for.hpp"
#include "ir/training_spec.hpp"

namespace splitscope {

/// What one update's element-wise step needs besides the data.
struct OptimizerStep {
  float learning_rate = 0;
  float momentum = 0;  ///< SGD
  bool adam = false;
  bool has_state = false;  ///< SGD with momentum, or Adam
  float correct1 = 1;      ///< Adam: 1 / (1 - β1^t)
  float correct2 = 1;      ///< Adam: 1 / (1 - β2^t)
};

/// The step of update number `t` (1 for the first) of `optimizer` at `learning_rate`.
OptimizerStep optimizer_step(const Optimizer& optimizer, double learning_rate, int64_t t);

/// Applies `step` to weights w[begin, end) from gradient g; `first` is SGD's
/// momentum or Adam's first moment, `second` Adam's second (null where unused).
void apply_optimizer_step(const OptimizerStep& step, float* w, const float* g, float* first, float* second,
                          int64_t begin, int64_t end);

/// Applies `step` to every tensor of one weight set, in place. The gradient
/// `g` lies flat, the tensors end to end in their order; so does the state:
/// first moments (SGD's momentum) from `state`, Adam's second moments after
/// all of them (`state` null for plain SGD). Each tensor's elements are split
/// over `parallel`: the update streams weights, gradient and state, so it is
/// bound by memory bandwidth, which one thread does not fill.
void apply_optimizer_step(ParallelFor& parallel, const OptimizerStep& step, std::vector<std::vector<float>>& tensors,
                          const float* g, float* state);

}  // namespace splitscope
