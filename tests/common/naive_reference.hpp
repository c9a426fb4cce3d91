#pragma once
// A whole network computed by its definitions, loop by loop in double
// precision, with the weights and inputs of params.hpp: the one reference the
// cpu and cuda backends are held to (tests/exec, tests/cuda). Shares no code
// with any backend.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "timeline/run_result.hpp"
#include "ir/graph.hpp"

namespace splitscope::testing_support {

/// The network output [batch, ...] for `seed`.
HostTensor naive_forward(const Graph& graph, uint64_t seed);

/// One weight moved by `delta`: element `element` of tensor `tensor` of weight set `param_key`.
struct WeightNudge {
  int param_key = -1;
  int tensor = 0;
  int64_t element = 0;
  double delta = 0;
};
/// The network output in double precision, with one weight nudged (finite differences).
std::vector<double> naive_output(const Graph& graph, uint64_t seed, const WeightNudge& nudge);

/// A network from JSON text, lowered.
std::shared_ptr<const Graph> graph_from_json(const std::string& json);
/// A zoo network by name (models/networks/NAME.json), lowered.
std::shared_ptr<const Graph> zoo_graph(const std::string& name);

/// An activation by its definition, in double precision.
double naive_activation(Activation activation, double x);

/// The convolution by its definition, on [rows][Cin][H][W] input and
/// W [Cout][Cin/groups][kh][kw]; `bias` may be empty.
struct NaiveConv {
  int64_t in_channels, in_h, in_w, filters, groups, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w;
  int64_t out_h() const { return (in_h + 2 * pad_h - kernel_h) / stride_h + 1; }
  int64_t out_w() const { return (in_w + 2 * pad_w - kernel_w) / stride_w + 1; }
};
std::vector<double> naive_conv(const NaiveConv& conv, int64_t rows, const std::vector<double>& input,
                               const std::vector<double>& weights, const std::vector<double>& bias);

}  // namespace splitscope::testing_support
