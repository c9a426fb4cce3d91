#pragma once
/// \file
/// The attributes an op carries from lowering onwards. Lowering copies them
/// from the network's layers, so that no stage after it reads the Model back:
/// partitioners, executors and the simulator see only ops.

#include <cstdint>

#include "ir/shape.hpp"

namespace splitscope {

/// Height/width pair for kernel, stride and padding.
struct Extent2 {
  int64_t h = 0;
  int64_t w = 0;
  bool operator==(const Extent2&) const = default;
};

enum class Activation { kNone, kRelu, kTanh, kSigmoid };

/// The loss of a training step (ir/training.hpp).
enum class LossKind {
  kSoftmaxCrossEntropy,  ///< networks ending in softmax: -log p[label], labels drawn from the seed
  kMeanSquaredError,     ///< the others: mean (y - t)², targets drawn from the seed
};

/// Every attribute any op kind has; a kind reads the ones its definition
/// names (ops/*.cpp) and leaves the rest at their defaults.
struct OpAttrs {
  Activation activation = Activation::kNone;  ///< dense, conv2d: applied after the bias
  bool bias = true;                           ///< dense, conv2d, cells
  int64_t groups = 1;                         ///< conv2d
  Extent2 kernel{0, 0};                       ///< conv2d, pooling
  Extent2 stride{1, 1};                       ///< conv2d, pooling
  Extent2 padding{0, 0};                      ///< conv2d
  int64_t hidden = 0;                         ///< cells: hidden units of the whole layer
  int64_t steps = 0;                          ///< cells: time steps of the layer (the cells of one stacked layer)
  int input_index = 0;                        ///< input: which of the network's inputs (Model::inputs)
  Shape sample;                               ///< input: that input's whole per-sample shape
  bool target = false;                        ///< input: the loss's labels or targets, not a network input
  LossKind loss = LossKind::kMeanSquaredError;  ///< loss, and the target input it reads
  int64_t offset = 0;                         ///< channel_slice: the first input channel it takes
  bool gru = false;                           ///< cell gradient ops: of a GRU (else an LSTM)
  int64_t cell_inputs = 0;                    ///< cell gradient ops: I, the features of the cell's x_t
  int64_t classes = 0;                        ///< target input of a cross-entropy loss: labels are in [0, classes)
  double epsilon = 1e-5;                      ///< batch_norm, layer_norm: added to the variance
  double momentum = 0.1;                      ///< batch_norm: running statistics' update weight (PyTorch's)
  double rate = 0.5;                          ///< dropout: the probability that an element is dropped
  int64_t heads = 1;                          ///< attention: heads (H / heads features each)
  bool causal = false;                        ///< attention: position t attends to positions <= t only
  bool positions = false;                     ///< embedding: adds a learned position table [T, F]
  int64_t vocab = 0;                          ///< embedding: rows of its table; network input: token ids in [0, vocab) (0: real values)
  /// A forward op as a training step runs it (OpDef::training_form): batch
  /// norm by batch statistics, dropout with its mask. False in inference.
  bool training = false;
  bool operator==(const OpAttrs&) const = default;
};

}  // namespace splitscope
