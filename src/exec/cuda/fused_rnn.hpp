#pragma once
/// \file
/// The fused single-device baseline of the pipelined-RNN demo: one
/// cudnnRNNForward call over every stacked layer and every step of one
/// recurrent layer (LSTM or GRU), with the weights of params.hpp laid out as
/// cuDNN wants them (rnn_weight_layout.hpp), so it computes exactly what the
/// cell-by-cell plan computes — only faster, the textbook's point. With a
/// training request, a training step of the stack as cuDNN trains it (see
/// FusedRnnRequest::training; written against cuDNN 9's headers, not yet
/// run on a GPU).
///
/// Plain C++ face: without a GPU (or in a build without CUDA)
/// run_fused_rnn() throws UnavailableError (exit 3).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exec/executor.hpp"
#include "ir/graph.hpp"
#include "ir/training_spec.hpp"

namespace splitscope::gpu {

struct FusedRnnRequest {
  std::shared_ptr<const Graph> graph;
  int layer = 0;        ///< index (Model::layers) of the lstm or gru layer
  /// The layer's input [B, T, I]. Empty: the network input from `seed`
  /// (params.hpp's input_value), which needs the layer to be the first one.
  HostTensor input;
  uint64_t seed = 0;
  std::string dtype = "fp32";  ///< fp32 (FMA math) or tf32 (tensor cores)
  int device = 0;              ///< CUDA device
  /// > 1: run on one green-context partition of 1/virtual_devices of the SMs,
  /// the size of one virtual device of `--virtual --devices N`.
  int virtual_devices = 1;
  /// Untimed runs first; a training request's warm-up steps are undone
  /// (weights and optimizer state restored, their losses dropped).
  int warmup = 2;
  int repeats = 10;
  /// Set: each timed repeat is a training step of `graph`, a training graph
  /// whose only layer is the stack (the demo's, mean squared error), with
  /// this optimizer: cudnnRNNForward in training mode, the loss and its
  /// gradient on the host from the network output, cudnnRNNBackwardData_v8,
  /// cudnnRNNBackwardWeights_v8, and the optimizer's update of cuDNN's whole
  /// weight space; no warm-up (it would be a step).
  std::optional<Optimizer> training;
};

struct FusedRnnResult {
  /// [B, T, H]: the top stacked layer's h at every step; training: the
  /// network output of the last step's forward pass ([B, H] or [B, T, H]).
  HostTensor output;
  std::vector<double> losses;    ///< training: one per step, of its forward pass
  std::vector<double> times_ms;  ///< one per timed repeat (CUDA events around the call)
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  int sm_count = 0;              ///< SMs the call could use
  std::string device_mode;       ///< "physical" or "virtual (green contexts, N SMs)" or the fallback
  std::string device_name;
  std::string math;              ///< what cuDNN was asked to use
};

/// The recurrent layer's shape, as the fused call sees it.
struct FusedRnnShape {
  bool lstm = true;
  int gates = 4;
  int64_t batch = 0, steps = 0, input = 0, hidden = 0, layers = 0;
  bool bias = true;
};

/// Checks the request (a recurrent layer; an input [B, T, I], or none for the
/// first layer; an fp32 or tf32 dtype) and returns the layer's shape.
/// InputError naming what is wrong. Plain C++: checked before any GPU is sought.
FusedRnnShape check_fused_rnn_request(const FusedRnnRequest& request);

/// The layer's input [B, T, I]: the request's, or the network input from its seed.
std::vector<float> fused_rnn_input(const FusedRnnRequest& request, const FusedRnnShape& shape);

/// Runs the fused stack. InputError as check_fused_rnn_request() says;
/// UnavailableError without a GPU.
FusedRnnResult run_fused_rnn(const FusedRnnRequest& request);

}  // namespace splitscope::gpu
