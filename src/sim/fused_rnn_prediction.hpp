#pragma once
/// \file
/// A predicted time for the fused single-device run of a stacked LSTM or GRU
/// (cuDNN's cudnnRNNForward on a GPU, the fused loop on a CPU), from the
/// machine's op cost model, for `demo rnn --backend sim`. The simulator runs
/// Plans, whose recurrent layers are one op per (layer, step); a fused stack
/// is no plan, so it is priced here the way a fused implementation works:
///
///   per stacked layer l (input features I_l):
///     one input product over all T·B rows, priced as a dense op:
///       FLOPs 2·G·H·I_l·B·T, bytes 4·(T·B·I_l + I_l·G·H + G·H + T·B·G·H);
///     T recurrent steps, each priced as a cell op (one launch each):
///       FLOPs 2·G·H·H·B,
///       bytes 4·(B·H + H·G·H + B·G·H + B·H (+ 2·B·H for LSTM's c in and out))
///
/// with G gates (4 LSTM, 3 GRU), every op by OpCostModel's roofline, launch
/// overhead included: L·(T + 1) launches in all. What it leaves out, and the
/// reason real fused stacks are often faster still: persistent kernels that
/// keep Wh on chip across steps, and fused gate math. Calibrated op times do
/// not apply (no op of the table is a fused call). A pooled machine gives the
/// one device every share (Machine::pooled).

#include <cstdint>
#include <string>

#include "ir/graph.hpp"
#include "sim/machine.hpp"

namespace splitscope {

struct FusedRnnPrediction {
  double seconds = 0;                  ///< the whole stack
  double input_products_seconds = 0;   ///< the L input products
  double recurrent_steps_seconds = 0;  ///< the L·T recurrent steps
  int64_t launches = 0;                ///< L·(T + 1)
  std::string method;                  ///< one sentence: how the time was obtained
};

/// Predicts recurrent layer `layer` (Model::layers index) of `graph`, fused,
/// on one device of `machine`. InputError when that layer is not recurrent.
FusedRnnPrediction predict_fused_rnn(const Machine& machine, const Graph& graph, int layer);

}  // namespace splitscope
