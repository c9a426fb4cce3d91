#pragma once
/// \file
/// The fused single-device baseline of `demo rnn --train` on the CPU: a
/// training step of a stacked LSTM or GRU network run as one loop, the way
/// cuDNN's training calls (cudnnRNNForward in training mode, then
/// cudnnRNNBackwardData_v8 and cudnnRNNBackwardWeights_v8) run it, not as a
/// plan of several ops per (layer, step):
///
///   forward, per stacked layer: one input product over all T·B rows, then
///     the steps, keeping every step's gate pre-activations (and c, or a
///     GRU's h·Wh) instead of recomputing them;
///   loss: mean squared error against the training graph's targets;
///   backward, per stacked layer from the top, steps in reverse: the gate
///     gradients of a step (recurrent_cell_backward.hpp's element-wise half,
///     on the kept pre-activations) and dh_{t-1} = G_t·Whᵀ; then, over all
///     T·B rows at once, dx = G·Wxᵀ, dWx = xᵀ·G, dWh = h_{t-1}ᵀ·G, db = Σ G
///     (three big products where the cell-by-cell plan runs 3·T small ones);
///   the optimizer step on each layer's weights.
///
/// The products split over the intra-op pool's threads. Weights, inputs and
/// targets are params.hpp's, so every step's loss and output equal the
/// cell-by-cell `single` plan's up to rounding.

#include <vector>

#include "exec/executor.hpp"
#include "ir/graph.hpp"

namespace splitscope {

struct FusedRnnTrainingResult {
  HostTensor output;             ///< the network output of the last step's forward pass
  std::vector<double> losses;    ///< one per step: the loss of its forward pass
  std::vector<double> times_ms;  ///< one per step: forward, loss, backward and update
  int threads = 1;               ///< threads of the intra-op pool the loop ran on
};

/// Runs `options.repeats` training steps of `graph`, a training graph
/// (ir/training.hpp) of a network whose only layer is a stacked lstm or gru
/// trained with mean squared error (the demo's network), with its optimizer.
/// Each step is timed; a warm-up would be a step too, so there is none.
/// Reads seed, repeats and intra_op_threads. InputError for any other graph.
FusedRnnTrainingResult run_fused_rnn_training(const Graph& graph, const RunOptions& options);

}  // namespace splitscope
