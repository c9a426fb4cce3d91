#pragma once
/// \file
/// Gradient rules several op definitions share (ops/*.cpp only).

#include <optional>
#include <vector>

#include "ir/gradient_builder.hpp"

namespace splitscope::gradient_rules {

using Gradients = std::vector<std::optional<TensorRef>>;

/// A weighted op with an activation (dense, conv2d): dZ = dY ⊙ f'(Y) (or dY
/// itself without one), then dX by an op of `input_kind` (where the input
/// wants a gradient) and the weights' gradient by an op of `weight_kind`.
void weighted(GradientBuilder& builder, NodeId node, const Gradients& gradients, OpKind input_kind,
              OpKind weight_kind);

/// An element-wise activation op: dX = dY ⊙ f'(Y).
void activation(GradientBuilder& builder, NodeId node, const Gradients& gradients, Activation activation);

/// A one-input op whose gradient is one op of `kind` reading `inputs`
/// (spelled as slots: kForwardInput, kForwardOutput, kOutputGradient) and
/// writing a tensor of the forward input's shape.
inline constexpr int kForwardInput = 0;
inline constexpr int kOutputGradient = 1;
void unary(GradientBuilder& builder, NodeId node, const Gradients& gradients, OpKind kind,
           const std::vector<int>& inputs);

/// One step of a recurrent cell (LSTM, or GRU when `gru`): the step's gate
/// gradients (its gates recomputed), then dx_t, dh_{t-1} (and dc_{t-1}) and
/// the step's share of the layer's weight gradient.
void cell(GradientBuilder& builder, NodeId node, const Gradients& gradients, bool gru);

}  // namespace splitscope::gradient_rules
