#pragma once
/// \file
/// A DeviceProgram: a Plan compiled into the exact device work the CUDA
/// backend issues — buffers, and steps (a matrix product, a convolution, a
/// copy, one of our kernels) each on one stream of one logical device, with
/// the earlier steps on other streams it must wait for.
///
/// The compiler (plan_compiler.hpp) is plain C++: every index, stride, offset
/// and cross-stream dependency is decided here, where tests can check it on a
/// machine without a GPU by interpreting the program on the host. The CUDA
/// runner only maps each step onto one library call or kernel launch.
///
/// Conventions: every size, offset and stride counts float32 elements; every
/// matrix is row-major (the runner translates to cuBLAS's column-major).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/layer.hpp"
#include "ir/ops/conv_geometry.hpp"
#include "ir/range.hpp"
#include "ir/training_spec.hpp"
#include "timeline/timeline.hpp"

namespace splitscope::gpu {

/// The three streams every logical device has.
enum class StreamLane { kCompute, kCopyIn, kCopyOut };

struct StreamId {
  int device = 0;
  StreamLane lane = StreamLane::kCompute;
  bool operator==(const StreamId&) const = default;
};

/// Which rows and columns of one weight tensor of params.hpp a buffer holds:
/// rows `rows` of the tensor viewed as [rows][row_length], and of each row the
/// columns of `column_blocks`, concatenated in order. This covers every slice
/// the executors take: a dense block W[reduce, out], conv filters [out][...],
/// and the gate-major columns g·H + u of a cell slice, packed as [.., G·U].
struct WeightGather {
  int param_key = -1;
  int tensor = 0;
  float scale = 0;
  Range rows;
  int64_t row_length = 0;
  std::vector<Range> column_blocks;
  float offset = 0;  ///< added to every value (ParamTensor::offset)
  /// The network's own tensor (Model::weights, an ONNX file's), read instead
  /// of params.hpp's values; null for those. It lives as long as the graph.
  const std::vector<float>* loaded = nullptr;

  int64_t row_width() const;  ///< columns kept per row
  int64_t elements() const { return rows.size() * row_width(); }
  bool operator==(const WeightGather&) const = default;
};

enum class BufferKind {
  kValue,    ///< one Value of the plan
  kWeight,   ///< a weight slice, filled once before the runs
  kScratch,  ///< per-device work space of the cells' gate products
  kReceive,  ///< a collective's scratch on a device: chunks received to sum, a reduce-scatter's partial sums
  kStaging,  ///< pinned host memory for `--link host` (device = -1)
  kState,    ///< an optimizer's state (training): zeros once, then kept from step to step
};

struct BufferSpec {
  BufferKind kind = BufferKind::kValue;
  int device = 0;  ///< logical device; -1 for pinned host memory
  int64_t elements = 0;
  int value = -1;                       ///< kValue: the plan value it holds
  std::optional<WeightGather> weight;   ///< kWeight: what fills it
  std::string label;                    ///< for messages
};

/// A position in a buffer.
struct Ref {
  int buffer = -1;
  int64_t offset = 0;
  bool valid() const { return buffer >= 0; }
  bool operator==(const Ref&) const = default;
};

/// Y[rows, cols] (+)= op(X)[rows, inner] · op(W)[inner, cols], where op(X) is
/// X stored [rows][inner], or with `transpose_x` X stored [inner][rows]
/// (element (r, k) at x[k·x_stride + r]); likewise op(W) is W stored
/// [inner][cols], or with `transpose_w` [cols][inner]. The backward pass's
/// products read the forward operands transposed in place this way
/// (dX = dZ·Wᵀ, dW = Xᵀ·dZ), as cuBLAS's transpose flags do.
struct MatMulStep {
  int64_t rows = 0, cols = 0, inner = 0;
  Ref x;
  int64_t x_stride = 0;
  Ref w;
  int64_t w_stride = 0;
  Ref y;
  int64_t y_stride = 0;
  bool accumulate = false;  ///< add to Y instead of overwriting it
  bool transpose_x = false;
  bool transpose_w = false;
};

/// Which of cuDNN's three convolution calls a ConvStep is. The geometry is
/// always the forward layer's; what is read and written changes:
/// - kForward: y = conv(x, filter);
/// - kBackwardData: x (the input's gradient) = conv_transpose(y (the output's
///   gradient), filter);
/// - kBackwardFilter: filter (the weights' gradient) (+)= corr(x, y (the
///   output's gradient)), summed over the batch.
enum class ConvPass { kForward, kBackwardData, kBackwardFilter };

/// A (grouped) convolution, NCHW, without bias: the piece of the layer one
/// call computes (`geometry`: its channels, filters and groups). Within one
/// sample, channel c of x starts at c·in_h·in_w and of y at c·out_h·out_w;
/// samples are `x_sample_stride` / `y_sample_stride` apart.
struct ConvStep {
  int64_t batch = 0;
  ConvGeometry geometry;
  Ref x;
  int64_t x_sample_stride = 0;
  Ref filter;  ///< [filters][in_channels / groups][kernel_h][kernel_w]
  Ref y;
  int64_t y_sample_stride = 0;
  ConvPass pass = ConvPass::kForward;
  bool accumulate = false;  ///< kBackwardFilter: add to the filter gradient already there
};

/// Max or average pooling, NCHW, strides as in ConvStep; padding adds window
/// positions, not values (an average counts the real elements only).
struct PoolStep {
  bool max = true;
  int64_t batch = 0;
  ConvGeometry window;  ///< in_channels: the channels pooled
  Ref x;
  int64_t x_sample_stride = 0;
  Ref y;
  int64_t y_sample_stride = 0;
};

/// In place on a contiguous [rows][channels][inner] block:
/// y = activation(y + bias[channel]); `bias` may be invalid (no bias).
struct BiasActivationStep {
  int64_t rows = 0, channels = 0, inner = 0;
  Ref y;
  Ref bias;
  Activation activation = Activation::kNone;
};

/// y[r][i] = activation(x[r][i]) for i < width.
struct MapStep {
  int64_t rows = 0, width = 0;
  Ref x;
  int64_t x_stride = 0;
  Ref y;
  int64_t y_stride = 0;
  Activation activation = Activation::kNone;
};

/// Softmax over x[r][0, width), writing its columns [out_begin, out_begin + out_width) to y[r].
struct SoftmaxStep {
  int64_t rows = 0, width = 0;
  Ref x;
  int64_t x_stride = 0;
  int64_t out_begin = 0, out_width = 0;
  Ref y;
  int64_t y_stride = 0;
};

/// The LSTM cell's element-wise math for `units` hidden units, after the gate
/// products: gates [rows][4·units] (gate-major i, f, g, o), bias [4·units] or
/// none, c_prev [rows][..] at stride c_prev_stride or none (zeros);
/// writes h_out and c_out [rows][units].
struct LstmCellStep {
  int64_t rows = 0, units = 0;
  Ref gates;
  Ref bias;
  Ref c_prev;
  int64_t c_prev_stride = 0;
  Ref h_out;
  Ref c_out;
};

/// The GRU cell's element-wise math (params.hpp): input_gates = x·Wx and
/// hidden_gates = h·Wh (or none at t = 0), both [rows][3·units] gate-major
/// r, z, n; bias [3·units] or none; h_prev at stride h_prev_stride or none.
struct GruCellStep {
  int64_t rows = 0, units = 0;
  Ref input_gates;
  Ref hidden_gates;
  Ref bias;
  Ref h_prev;
  int64_t h_prev_stride = 0;
  Ref h_out;
};

/// y[i] = Σ_k inputs[k][i], summed in the order given (the same order on
/// every device, so all-reduce results are bit-identical everywhere).
struct SumStep {
  int64_t elements = 0;
  Ref y;
  std::vector<Ref> inputs;
};

/// The loss's gradient w.r.t. the network output, over `rows` rows of
/// `width`: softmax cross-entropy, g = (p − onehot(label)) / batch, with the
/// label the first target of a row; mean squared error, g = 2(p − t) /
/// (batch·width). `batch` is the whole batch's, whatever rows a micro-batch holds.
struct LossGradStep {
  int64_t rows = 0, width = 0;
  bool cross_entropy = false;
  int64_t batch = 1;
  Ref prediction;
  int64_t prediction_stride = 0;
  Ref target;
  int64_t target_stride = 0;
  Ref gradient;  ///< [rows][width], contiguous
};

/// dx[r][i] = dy[r][i]·f'(y[r][i]) for i < width, with f' written in terms of
/// the activation's output y (relu: y > 0; tanh: 1 − y²; sigmoid: y(1 − y));
/// none: dx = dy (y is not read).
struct ActivationGradStep {
  int64_t rows = 0, width = 0;
  Ref dy;
  int64_t dy_stride = 0;
  Ref y;
  int64_t y_stride = 0;
  Ref dx;
  int64_t dx_stride = 0;
  Activation activation = Activation::kNone;
};

/// A bias's gradient: db[c] (+)= Σ_r Σ_i dz[r·dz_stride + c·inner + i] for c
/// < channels (inner: 1 for a dense layer, out_h·out_w for a convolution).
struct BiasGradStep {
  int64_t rows = 0, channels = 0, inner = 1;
  Ref dz;
  int64_t dz_stride = 0;
  Ref db;
  bool accumulate = false;
};

/// Pooling's backward, NCHW as PoolStep (in_h, in_w: the input's; out_h(),
/// out_w(): the pooled output's). Each input element gathers the gradients of
/// the windows it belongs to, in window order: max, of the windows whose
/// first largest element it is (as the forward scan picks); average, dy over
/// the window's real element count. `x` (the forward input) only for max.
struct PoolGradStep {
  bool max = true;
  int64_t batch = 0;
  ConvGeometry window;  ///< the forward layer's, in_channels: the channels of the slice
  Ref x;
  int64_t x_sample_stride = 0;
  Ref dy;
  int64_t dy_sample_stride = 0;
  Ref dx;
  int64_t dx_sample_stride = 0;
};

/// One optimizer step over `elements` weights in place (ir/training_spec.hpp's
/// equations, exec/cpu/kernels/optimizer_step.hpp's arithmetic): SGD, SGD with
/// momentum (`first` its velocity) or Adam (`first`, `second` its moments).
/// Adam's bias correction needs the update's number: `counter` (one float
/// kept on the device) counts the updates and is advanced by the step itself
/// before the weights, so a replayed CUDA graph counts as eager runs do.
struct UpdateStep {
  int64_t elements = 0;
  Optimizer optimizer;
  Ref weights;
  Ref gradient;
  Ref first;
  Ref second;
  Ref counter;
};

/// A recurrent cell step's backward, element-wise half (the cpu backend's
/// recurrent_cell_backward.hpp equations), after its gate pre-activations are
/// recomputed by products as the forward pass computes them:
/// - LSTM: `gates` [rows][4·units] = x·Wx + h·Wh (i, f, g, o), `bias` added
///   here as the forward kernel adds it; c_prev and dc optional (zeros);
/// - GRU: `gates` = x·Wx [rows][3·units] (r, z, n), `hidden_gates` = h·Wh or
///   none (t = 0), `bias` on the input side; h_prev optional.
/// Writes `dgates` unit-major [rows][units][4] (LSTM di, df, dg, do; GRU dr,
/// dz, dn, dn·r) and `second` [rows][units] (LSTM dc_prev; GRU dh⊙z).
struct CellGradStep {
  bool gru = false;
  int64_t rows = 0, units = 0;
  Ref gates;
  Ref hidden_gates;
  Ref bias;
  Ref c_prev;
  int64_t c_prev_stride = 0;
  Ref h_prev;
  int64_t h_prev_stride = 0;
  Ref dh;
  int64_t dh_stride = 0;
  Ref dc;
  int64_t dc_stride = 0;
  Ref dgates;
  int64_t dgates_stride = 0;
  Ref second;
  int64_t second_stride = 0;
};

/// The gate-major matrix a cell's gradient products take, gathered from the
/// unit-major gate gradients: out[r][g·units + u] = dgates[r·dgates_stride +
/// u·4 + columns[g]] for g < count (out contiguous, rows count·units apart).
struct GateGatherStep {
  int64_t rows = 0, units = 0;
  int count = 0;
  std::array<int, 4> columns{};
  Ref dgates;
  int64_t dgates_stride = 0;
  Ref out;
};

/// y[0, elements) = 0 (a weight gradient with nothing to add, e.g. dWh of a one-step sequence).
struct ZeroStep {
  Ref y;
  int64_t elements = 0;
};

/// `height` rows of `width` elements from src (rows `src_pitch` apart) to dst
/// (rows `dst_pitch` apart). Between devices, or through pinned host memory,
/// as the buffers' devices say.
struct CopyStep {
  Ref src;
  int64_t src_pitch = 0;
  Ref dst;
  int64_t dst_pitch = 0;
  int64_t width = 0;
  int64_t height = 1;
};

/// Which normalization a NormStep computes (ir/ops/batch_norm.cpp, layer_norm.cpp and their gradients).
enum class NormMode {
  kBatchNorm,
  kBatchNormGradInput,
  kBatchNormGradWeight,
  kLayerNorm,
  kLayerNormGradInput,
  kLayerNormGradWeight,
};

/// Batch norm over [rows][channels][inner] (per channel), or layer norm over
/// runs of `inner` features (`channels` runs a row), forward or backward;
/// one hand kernel (two for layer norm's weight gradient: its runs'
/// statistics into `scratch`, then the sums per feature).
struct NormStep {
  NormMode mode = NormMode::kBatchNorm;
  int64_t rows = 0, channels = 0, inner = 1;
  float epsilon = 1e-5f;
  bool training = false;
  Ref x;
  int64_t x_stride = 0;
  Ref dy;  ///< backward only
  int64_t dy_stride = 0;
  Ref gamma;
  Ref beta;  ///< forward only
  Ref out;   ///< y, dX, or the weight gradient (dgamma then dbeta)
  int64_t out_stride = 0;
  Ref previous;  ///< a weight gradient's running sum of earlier micro-batches, or invalid
  Ref scratch;   ///< layer norm's weight gradient: 2 floats a run
};

/// Dropout (ir/ops/dropout_mask.hpp) on [rows][width]: row r, column j is
/// element (first_row + r)·sample_elements + first_element + j of the batch.
struct DropoutStep {
  int64_t rows = 0, width = 0;
  int64_t first_row = 0, first_element = 0, sample_elements = 0;
  int layer = 0;
  float rate = 0;
  bool training = false;
  Ref x;
  int64_t x_stride = 0;
  Ref y;
  int64_t y_stride = 0;
};

using StepAction = std::variant<MatMulStep, ConvStep, PoolStep, BiasActivationStep, MapStep, SoftmaxStep,
                                LstmCellStep, GruCellStep, SumStep, CopyStep, LossGradStep, ActivationGradStep,
                                BiasGradStep, PoolGradStep, UpdateStep, CellGradStep, GateGatherStep, ZeroStep,
                                NormStep, DropoutStep>;

struct Step {
  StepAction action;
  StreamId stream;
  int span = -1;            ///< the span (and so the plan op) it belongs to
  std::vector<int> waits;   ///< earlier steps on other streams that must finish first
  std::vector<int> reads;   ///< buffers read
  std::vector<int> writes;  ///< buffers written
};

/// One Timeline span to be measured: an op on one device (plan.hpp: one per
/// compute/epilogue op, one per transfer on the destination, one per output
/// device of a collective), and the steps whose device time it covers.
struct SpanSpec {
  int op = -1;
  int device = 0;
  Lane lane = Lane::kCompute;
  SpanKind kind = SpanKind::kCompute;
  int64_t flops = 0;
  int64_t bytes = 0;  ///< bytes that crossed into `device` (transfers and collectives)
  std::vector<int> steps;
};

struct DeviceProgram {
  int devices = 1;
  std::vector<BufferSpec> buffers;
  std::vector<Step> steps;  ///< in issue order
  std::vector<SpanSpec> spans;
  std::vector<int> value_buffer;  ///< plan value id -> its buffer; -1 for parameter values (weight buffers hold them)
};

/// Bytes the program allocates on each logical device (pinned host memory not counted).
std::vector<int64_t> device_bytes(const DeviceProgram& program);

}  // namespace splitscope::gpu
