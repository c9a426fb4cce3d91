#pragma once
/// \file
/// The training step as a graph: the forward graph, a loss, and the backward
/// nodes its op definitions' gradient rules emit (ops/op_def.hpp), derived
/// over the graph in general, so that networks that branch and join train
/// without rules of their own: a tensor read by several ops gets the sum of
/// their gradients.
///
/// The loss: softmax cross-entropy for a network whose output is a softmax
/// (fused: its gradient w.r.t. the softmax's input is (p - onehot) / B),
/// mean squared error otherwise (2 (y - t) / (B·n)). Both average over the
/// batch. Labels and targets are a graph input of their own (attrs.target),
/// drawn from the seed (params.hpp's target_value).
///
/// Weight gradients are sink nodes (OpDef::writes_gradient); the partitioner
/// that places them also places the optimizer's update of each weight slice
/// (plan/plan_builder.hpp), after the last micro-batch.

#include <cstdint>
#include <span>

#include "ir/graph.hpp"
#include "ir/range.hpp"
#include "ir/training_spec.hpp"

namespace splitscope {

/// The loss a network trains with: cross-entropy when its output is a softmax.
LossKind default_loss(const Graph& forward);

/// The training graph of `forward` (a lowered, forward-only graph), with
/// `optimizer` (the loss is default_loss()). Throws InputError (exit 2)
/// naming the first layer whose op kind has no gradient rule yet.
Graph training_graph(const Graph& forward, const Optimizer& optimizer);

/// The target input node of a training graph (attrs.target).
NodeId target_node(const Graph& graph);

/// The loss of one step, from the network's output [batch, ...] (the
/// forward pass of that step) and the seed's targets: the mean over the
/// batch of -log p[label] (cross-entropy) or of the mean of (y - t)² (MSE).
double step_loss(const Graph& graph, std::span<const float> prediction, uint64_t seed);

/// The same loss over rows `rows` of the batch only, from their prediction
/// [rows.size(), ...]: what one data-parallel worker sees of its share.
double rows_loss(const Graph& graph, std::span<const float> prediction, uint64_t seed, Range rows);

}  // namespace splitscope
