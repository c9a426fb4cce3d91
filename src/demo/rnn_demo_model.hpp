#pragma once
/// \file
/// The network of `splitscope demo rnn`: one stacked LSTM or GRU, nothing
/// else, so that its layer split shows the pure time-step wavefront.

#include <cstdint>
#include <string>
#include <vector>

#include "ir/model.hpp"

namespace splitscope {

struct RnnDemoShape {
  std::string cell = "lstm";  ///< "lstm" or "gru"
  int64_t layers = 4;
  int64_t hidden = 1024;
  int64_t steps = 32;
  int64_t batch = 64;
};

/// The model for `shape`; InputError (naming the option) for a bad shape.
Model rnn_demo_model(const RnnDemoShape& shape);

/// One `--sweep name=v1,v2,...` request over hidden, layers, steps or batch.
struct RnnSweep {
  std::string name;
  std::vector<int64_t> values;
};

/// Parses "hidden=256,512"; InputError naming --sweep otherwise.
RnnSweep parse_rnn_sweep(const std::string& text);

/// `shape` with the swept field set to `value`.
RnnDemoShape with_swept(RnnDemoShape shape, const std::string& name, int64_t value);

}  // namespace splitscope
