#pragma once
/// \file
/// The fused single-device baseline of the pipelined-RNN demo on the CPU: a
/// stacked LSTM or GRU layer run as one tight loop, the way cuDNN and
/// PyTorch's CPU LSTM run it, not as a plan of one op per (layer, step):
///
///   for each stacked layer:
///     pre = X·Wx + b            one product over all T·B rows of the sequence
///     for t in 0 .. T-1:
///       pre_t += h_{t-1}·Wh     (GRU: kept apart, the reset gate scales it)
///       h_t, c_t = gate math    (recurrent_cell.hpp's element-wise halves)
///
/// with no scheduler and no per-op dispatch. Samples are independent, so the
/// intra-op pool's threads each run this whole loop over their own block of
/// the batch, one sgemm thread each, and meet only at the end (a batch
/// smaller than the pool leaves threads idle). Weights and inputs are
/// params.hpp's, so the output equals the cell-by-cell plan's up to rounding.
/// Weights and buffers are made before the timed runs.

#include <cstdint>
#include <memory>
#include <vector>

#include "exec/executor.hpp"
#include "ir/graph.hpp"

namespace splitscope {

struct FusedRnnLoopResult {
  /// The layer's output as the network would give it: [B, H] (the top
  /// layer's h at the last step) or, with return_sequences, [B, T, H].
  HostTensor output;
  std::vector<double> times_ms;  ///< one per timed repeat: the whole stack, every step
  int threads = 1;               ///< threads of the intra-op pool the loop ran on
};

/// Runs recurrent layer `layer` of `graph` (Model::layers index; it must be
/// the network's first layer, so that its input is the network input from
/// `options.seed`). Reads seed, warmup, repeats and intra_op_threads (0: the
/// threads the cpu backend gives a one-device plan: every hardware thread).
/// InputError when the layer is not a recurrent first layer or the options
/// are impossible.
FusedRnnLoopResult run_fused_rnn_loop(const Graph& graph, int layer, const RunOptions& options);

/// A recurrent layer's network output from its top stacked layer's h at
/// every step (`top`, [B·T × H] with row b·T + t): all of it [B, T, H] with
/// return_sequences, else the last step's [B, H].
HostTensor stack_network_output(const std::vector<float>& top, int64_t batch, int64_t steps, int64_t hidden,
                                bool return_sequences);

/// The cell of stacked layer `sublayer` of recurrent layer `layer` at step 0,
/// whose weights every step of that stacked layer reads.
NodeId stacked_layer_cell(const Graph& graph, int layer, int64_t sublayer);

}  // namespace splitscope
