#pragma once
/// \file
/// A training run whose loss becomes NaN or infinite has failed: every path
/// that computes losses (training steps, parameter servers, the fused RNN
/// baselines) checks them here, so that a diverging run ends with one message
/// naming the step and what to try rather than a column of `nan` and exit 0.

#include <vector>

#include "ir/training_spec.hpp"

namespace splitscope {

/// Throws RunError (exit 1) if `losses[i]` is not finite, naming step
/// `first_step + i` (steps count from 1), the losses before it and what to
/// try: a lower --lr than `optimizer`'s, Adam instead of SGD. `async`: a
/// parameter server's asynchronous run, whose stale gradients have
/// mitigations of their own to suggest.
void check_losses_finite(const std::vector<double>& losses, const Optimizer& optimizer, bool async = false);

}  // namespace splitscope
