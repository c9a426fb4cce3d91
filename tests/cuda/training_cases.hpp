#pragma once
// What the cuda backend's training tests share: the optimizer a case trains
// with, and the skip where there is no GPU.

#include <gtest/gtest.h>

#include "exec/cuda_backend.hpp"
#include "ir/training_spec.hpp"

namespace splitscope::testing {

/// SGD with momentum 0.9 at lr 0.05, or Adam at lr 0.01.
inline Optimizer training_optimizer(bool adam) {
  Optimizer optimizer;
  if (adam) {
    optimizer.kind = OptimizerKind::kAdam;
    optimizer.learning_rate = 0.01;
  } else {
    optimizer.learning_rate = 0.05;
    optimizer.momentum = 0.9;
  }
  return optimizer;
}

}  // namespace splitscope::testing

/// Skips the test, with the reason, where there is no CUDA GPU.
#define SKIP_WITHOUT_GPU()                                                                   \
  do {                                                                                       \
    if (::splitscope::cuda_gpu_count() == 0) GTEST_SKIP() << "no CUDA GPU here: the GPU tests need one";  \
  } while (false)
