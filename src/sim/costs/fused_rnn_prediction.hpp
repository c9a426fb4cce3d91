#pragma once
/// \file
/// A predicted time for the fused single-device run of a stacked LSTM or GRU
/// (cuDNN's cudnnRNNForward on a GPU, the fused loop on a CPU), from the
/// machine's op cost model, for `demo rnn --backend sim`. The simulator runs
/// Plans, whose recurrent layers are one op per (layer, step); a fused stack
/// is no plan, so it is priced here the way a fused implementation works —
/// cuDNN's standard algorithm as Appleyard et al. describe it ("Optimizing
/// Performance of Recurrent Neural Networks on GPUs", 2016):
///
///   per stacked layer l (input features I_l):
///     one input product over all T·B rows, priced as a dense op:
///       FLOPs 2·G·H·I_l·B·T, bytes 4·(T·B·I_l + I_l·G·H + G·H + T·B·G·H);
///     T recurrent steps, each priced as a cell op:
///       FLOPs 2·G·H·H·B,
///       bytes 4·(B·H + H·G·H + B·G·H + B·H (+ 2·B·H for LSTM's c in and out))
///
///   and the layers run as a wavefront on one device: cell (l, t) runs beside
///   (l+1, t-1) on another stream, and layer l's input product is computed in
///   chunks as layer l-1 produces them (so its work, at dense efficiency, is
///   all that counts of it). Slice k of the wavefront holds the n_k cells with
///   l + t = k; they share the device, which they may fill up to what one
///   large matrix product reaches, and none finishes sooner than a cell alone:
///
///   slice_k = launch + max(step_alone, n_k · step_full)
///   seconds = launch + work(input product 0) + Σ_{l≥1} work(input product l)
///           + Σ_k slice_k                                  (T + L - 1 slices)
///
///   with work() the roofline without launch, step_alone a step at the cell
///   kind's efficiency and step_full the same FLOPs and bytes at dense
///   efficiency: small cells that leave the device half empty run side by
///   side, cells that fill it queue.
///
/// with G gates (4 LSTM, 3 GRU) and every work by OpCostModel's roofline.
/// Where the machine prices the cell kind by the datasheet rules
/// (docs/cost-model.md), the products are priced by the GEMM rule instead
/// (gemm_efficiency.hpp: tile and wave quantization), step_alone is the
/// recurrent product plus the gate kernel's bytes (both products'
/// pre-activations, the bias, the state in and out) at the achieved DRAM
/// rate, step_full the step's FLOPs and bytes at the peaks, and the launch
/// the rules' (device_facts.hpp). Where the device also has achieved-rate
/// rules (sim/costs/achieved_rates.hpp), as every GPU preset does, each product
/// and the gate kernel run at the achieved share of their family
/// (OpCostModel::product_work_seconds, streaming_work_seconds), and cells
/// side by side at the wide products' share: the fused stack is priced as
/// the split's cells are, so the two sides of `demo rnn` compare like with
/// like.
/// What it leaves out, and the reason real fused stacks are often faster
/// still: persistent kernels (CUDNN_RNN_ALGO_PERSIST_*) that keep Wh on chip
/// across steps and pay one launch per layer. Calibrated op times do not apply (no op of the table is a
/// fused call). A pooled machine gives the one device every share
/// (Machine::pooled).

#include <cstdint>
#include <string>

#include "ir/graph.hpp"
#include "sim/machine/machine.hpp"

namespace splitscope {

struct FusedRnnPrediction {
  double seconds = 0;                  ///< the whole stack
  double input_products_seconds = 0;   ///< work of the L input products, plus the first one's launch
  double recurrent_steps_seconds = 0;  ///< the T + L - 1 wavefront slices of the L·T steps, one launch each
  int64_t launches = 0;                ///< L·(T + 1) kernels issued
  int64_t exposed_launches = 0;        ///< T + L: those whose latency is on the critical path
  std::string method;                  ///< one sentence: how the time was obtained
};

/// Predicts recurrent layer `layer` (Model::layers index) of `graph`, fused,
/// on one device of `machine`. InputError when that layer is not recurrent.
FusedRnnPrediction predict_fused_rnn(const Machine& machine, const Graph& graph, int layer);

/// A fused training step (cuDNN's cudnnRNNForward in training mode, then
/// cudnnRNNBackwardData_v8 and cudnnRNNBackwardWeights_v8; the cpu backend's
/// fused training loop) of a training graph whose only layer is a stacked
/// lstm or gru:
///   the forward as predict_fused_rnn();
///   the backward through time as the same wavefront of T + L - 1 slices,
///     each step the product dh·Whᵀ (FLOPs 2·B·H·G·H, as the forward's) and
///     the gate-gradient kernel's bytes (the kept pre-activations, c or h,
///     dh, dc in; the gate gradients and dc_{t-1} out);
///   per layer, over all T·B rows: dx = G·Wxᵀ (layers above the first:
///     the first's input needs none), dWx = xᵀ·G and dWh = h_{t-1}ᵀ·G (GEMMs
///     with K = T·B), db's bytes;
///   the optimizer's update of every weight, streamed as an update op.
struct FusedRnnTrainingPrediction {
  double seconds = 0;
  double forward_seconds = 0;
  double backward_seconds = 0;  ///< the steps' wavefront and the products over all rows
  double update_seconds = 0;
  std::string method;
};
FusedRnnTrainingPrediction predict_fused_rnn_training(const Machine& machine, const Graph& graph);

}  // namespace splitscope
