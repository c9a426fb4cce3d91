#pragma once
/// \file
/// What the cpu backend's dense, conv2d and recurrent cell kernels
/// (exec/cpu/kernels/dense.cpp, conv2d.cpp, recurrent_cell.cpp) cost, pass by
/// pass, on a device whose sgemm rates were timed by shape (DeviceSpec::gemm_rates):
/// - dense: the bias copied into every output row, one sgemm of
///   (rows, outputs, inputs), the activation in place;
/// - a recurrent cell's step: the bias copied into every row of the gates, one sgemm of (rows,
///   gates·units, inputs), one of (rows, gates·units, hidden) after the first
///   step (a GRU's first step fills its zero h·Wh instead), then the gate
///   arithmetic at the device's measured time per (row, unit);
/// - conv2d, per sample and per group the slice covers: im2col (every input
///   patch copied out, channels·kh·kw rows of out_h·out_w values, padding as
///   zeros), the bias filled into the output planes, one sgemm of
///   (filters, out_h·out_w, channels·kh·kw); then per sample the activation
///   over its output planes in place.
/// Each product is priced at the curve's rate for its shape (a curve timed on
/// the device's threads prices the kernel's split of it over them); im2col
/// splits over `threads` as the kernel's ParallelFor does (whole rows of the
/// patch matrix, chunks of at least 32768 values: conv2d.cpp's
/// kMinCopyElements, at most one per thread); the bias and activation passes
/// run on one thread, as the kernels run them. Where the host's passes were
/// timed (`passes`, cpu_pass_rates.hpp), each costs its timed rate: the bias
/// copy or fill (and a GRU's zero h·Wh) the fill rate per value, the
/// activation the ReLU rate, im2col per value and per call at the rate timed
/// on as many threads as it splits over (one thread's over a thread's rows
/// where that count was not timed). Otherwise each pass that writes or
/// rewrites F floats costs 8·F bytes at the device's memory rate (read and
/// written, as a memcpy of 4·F bytes is: a cpu machine's memory bandwidth is
/// twice its memcpy rate, calibrated_machine.hpp). One launch (the op gap a
/// worker pays between tasks) per op. Where the device's weights do not stay
/// in its cache (`weight_stream`), each dense and cell product takes max(its
/// grid time, its weights' bytes at the stream's time per byte for its
/// rows): a product of few rows is then as slow as its weights arrive. A device of several shares priced by a
/// one-thread curve divides this by its speedup, as any modelled op
/// (op_cost_model.hpp).

#include "ir/graph.hpp"
#include "ir/slice.hpp"
#include "sim/costs/conv_algorithm.hpp"
#include "sim/costs/cpu_pass_rates.hpp"
#include "sim/costs/gemm_rate_curve.hpp"
#include "sim/costs/rnn_step_cost.hpp"
#include "sim/costs/weight_stream_curve.hpp"

namespace splitscope {

struct CpuKernelRates {
  const GemmRateCurve* gemm = nullptr;
  double memory_bytes_per_second = 0;
  double launch_seconds = 0;
  int threads = 1;  ///< the device's threads, over which im2col splits; the curve's own
  const CpuPassRates* passes = nullptr;  ///< the timed passes; null: 8 bytes a value at the memory rate
  /// Not empty: the weights are not in the caches (DeviceSpec::weight_stream),
  /// and a dense or cell product takes at least its weights' bytes times the
  /// curve's seconds per byte at its rows.
  WeightStreamCurve weight_stream;
};

/// Seconds for `slice` of a dense `node`.
double cpu_dense_seconds(const CpuKernelRates& rates, const OpNode& node, const Slice& slice);

/// Seconds for one step of a recurrent cell of `shape` (op_cost_model.cpp's
/// cell_shape()) whose gate arithmetic takes `pointwise_seconds` per (row, unit).
double cpu_cell_seconds(const CpuKernelRates& rates, const OpNode& node, const CellShape& shape,
                        double pointwise_seconds);

/// Seconds for `slice` of a maxpool or avgpool `node` on one thread, as its
/// kernel runs (exec/cpu/kernels/pooling.cpp): every output value of the
/// slice reduces its kh x kw window, at `ns_per_window_value` an element;
/// one launch.
double cpu_pool_seconds(const CpuKernelRates& rates, const OpNode& node, const Slice& slice,
                        double ns_per_window_value);

/// Seconds for the convolution `shape` of a conv2d `node` (the slice's
/// shape, op_cost_model.cpp's forward_conv_shape()).
double cpu_conv2d_seconds(const CpuKernelRates& rates, const OpNode& node, const Slice& slice, const ConvShape& shape);

}  // namespace splitscope
