#include "exec/cpu/kernels/optimizer_step.hpp"

#include <cmath>

namespace splitscope {
namespace {

/// Weights a thread updates at least (below that, a split costs more than it saves).
constexpr int64_t kUpdateGrain = 1 << 15;

}  // namespace

OptimizerStep optimizer_step(const Optimizer& optimizer, double learning_rate, int64_t t) {
  OptimizerStep step;
  step.learning_rate = static_cast<float>(learning_rate);
  step.momentum = static_cast<float>(optimizer.momentum);
  step.adam = optimizer.adam();
  step.has_state = optimizer.state_per_param() > 0;
  // Bias corrections in double: β^t loses float's precision early on.
  step.correct1 = static_cast<float>(1.0 / (1.0 - std::pow(Optimizer::kBeta1, static_cast<double>(t))));
  step.correct2 = static_cast<float>(1.0 / (1.0 - std::pow(Optimizer::kBeta2, static_cast<double>(t))));
  return step;
}

void apply_optimizer_step(const OptimizerStep& step, float* w, const float* g, float* first, float* second,
                          int64_t begin, int64_t end) {
  const float lr = step.learning_rate;
  if (step.adam) {
    const auto beta1 = static_cast<float>(Optimizer::kBeta1);
    const auto beta2 = static_cast<float>(Optimizer::kBeta2);
    const auto epsilon = static_cast<float>(Optimizer::kEpsilon);
    for (int64_t i = begin; i < end; ++i) {
      first[i] = beta1 * first[i] + (1.0f - beta1) * g[i];
      second[i] = beta2 * second[i] + (1.0f - beta2) * g[i] * g[i];
      w[i] -= lr * (first[i] * step.correct1) / (std::sqrt(second[i] * step.correct2) + epsilon);
    }
  } else if (step.has_state) {
    for (int64_t i = begin; i < end; ++i) {
      first[i] = step.momentum * first[i] + g[i];
      w[i] -= lr * first[i];
    }
  } else {
    for (int64_t i = begin; i < end; ++i) w[i] -= lr * g[i];
  }
}

void apply_optimizer_step(ParallelFor& parallel, const OptimizerStep& step, std::vector<std::vector<float>>& tensors,
                          const float* g, float* state) {
  int64_t count = 0;  // weights in all: where Adam's second moments start
  for (const std::vector<float>& tensor : tensors) count += static_cast<int64_t>(tensor.size());
  int64_t offset = 0;  // of the tensor in the flat gradient and state
  for (std::vector<float>& tensor : tensors) {
    float* w = tensor.data();
    const float* grad = g + offset;
    float* first = state != nullptr ? state + offset : nullptr;
    float* second = step.adam ? state + count + offset : nullptr;
    parallel.run(static_cast<int64_t>(tensor.size()), kUpdateGrain, [&](int64_t begin, int64_t end) {
      apply_optimizer_step(step, w, grad, first, second, begin, end);
    });
    offset += static_cast<int64_t>(tensor.size());
  }
}

}  // namespace splitscope
