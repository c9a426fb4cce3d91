#pragma once
/// \file
/// What one recurrent cell op (one stacked layer at one time step, or a
/// slice of its hidden units) costs when run as cuDNN's standard RNN
/// algorithm runs it (CUDNN_RNN_ALGO_STANDARD; Appleyard, Kocisky and
/// Blunsom, "Optimizing Performance of Recurrent Neural Networks on GPUs",
/// 2016, which describes it): not one kernel but
///
/// 1. the input product x·Wx, batched over all T steps of the layer into one
///    GEMM (M = T·B, N = G·U, K = I) before the recurrence, since no step's
///    input depends on the recurrence: each step's share is 1/T of it,
///    launch included;
/// 2. the recurrent product h_{t-1}·Wh (M = B, N = G·U, K = H), one GEMM and
///    one launch per step, the first included (cuDNN runs the same kernels on
///    a zero initial state, as the op's FLOP count, 2·G·U·(I+H)·B, assumes);
/// 3. one element-wise kernel for the gates and the state update: it reads
///    each product's G·U pre-activations per row, the bias, and (t > 0) the
///    previous c (LSTM) or h (GRU) of its units, and writes h (and c): memory
///    bound, at the achieved DRAM rate, plus a launch;
///
/// for G gates (4 LSTM, 3 GRU), B rows, I inputs, H hidden units of which
/// the slice holds U. The products are priced by gemm_efficiency.hpp (tile
/// and wave quantization, memory bound for small B): a small cell is three
/// launches and two skinny products, not one roofline and one launch.

#include <cstdint>

#include "sim/machine/device_facts.hpp"

namespace splitscope {

struct CellShape {
  int64_t rows = 1;     ///< B
  int64_t input = 1;    ///< I
  int64_t hidden = 1;   ///< H
  int64_t units = 1;    ///< U: the slice's hidden units
  int64_t gates = 4;    ///< G
  int64_t steps = 1;    ///< T: the layer's time steps
  bool has_state = false;  ///< t > 0: the previous state is read from memory (at t = 0 it is zero)
  bool lstm = true;
};

struct CellEstimate {
  double input_product = 0;      ///< this step's share of the batched input GEMM, launch included
  double recurrent_product = 0;  ///< launch included
  double elementwise = 0;        ///< launch included
  double kernels = 0;            ///< per step: 1/T + 2, and a reduction per split-K product
  double seconds = 0;            ///< the sum
};

CellEstimate estimate_cell_step(const DeviceFacts& facts, const CellShape& shape);

}  // namespace splitscope
