#include "exec/cuda/program_data.hpp"

#include <algorithm>
#include <thread>

#include "exec/cuda/plan_compiler.hpp"
#include "ir/params.hpp"
#include "util/check.hpp"

namespace splitscope::gpu {
namespace {

/// Below this many elements one thread is faster than starting several.
constexpr int64_t kParallelThreshold = int64_t{1} << 20;
constexpr unsigned kMaxFillThreads = 16;

}  // namespace

std::vector<float> materialise(const WeightGather& gather, uint64_t seed) {
  const int64_t width = gather.row_width();
  std::vector<float> data(static_cast<size_t>(gather.elements()));
  auto fill_rows = [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) {
      float* out = data.data() + (r - gather.rows.begin) * width;
      const int64_t row_start = r * gather.row_length;
      for (const Range& block : gather.column_blocks) {
        for (int64_t c = block.begin; c < block.end; ++c) {
          *out++ = gather.loaded != nullptr
                       ? (*gather.loaded)[static_cast<size_t>(row_start + c)]
                       : gather.offset + param_value(seed, gather.param_key, gather.tensor, row_start + c, gather.scale);
        }
      }
    }
  };
  const int64_t rows = gather.rows.size();
  const unsigned threads =
      gather.elements() < kParallelThreshold ? 1u : std::clamp(std::thread::hardware_concurrency(), 1u, kMaxFillThreads);
  if (threads <= 1 || rows < 2) {
    fill_rows(gather.rows.begin, gather.rows.end);
    return data;
  }
  std::vector<std::thread> workers;
  const auto parts = split_evenly(rows, std::min<int64_t>(threads, rows));
  for (const Range& part : parts) {
    workers.emplace_back(fill_rows, gather.rows.begin + part.begin, gather.rows.begin + part.end);
  }
  for (std::thread& worker : workers) worker.join();
  return data;
}

std::vector<float> network_input(const Plan& plan, const Value& value, uint64_t seed) {
  const Graph& graph = *plan.graph;
  const OpNode& node = graph.node(value.node);
  SPLITSCOPE_CHECK(node.kind == OpKind::kInput, "value " + std::to_string(value.id) + " is not a network input");
  std::vector<float> data(static_cast<size_t>(value_elements(*plan.graph, value)));
  const Shape& input = node.attrs.sample;
  const int which = node.attrs.input_index;
  size_t at = 0;
  if (node.step >= 0) {
    // A step input of a sequence [T, F]: rows x[b, t, :], element b·T·F + t·F + f.
    const int64_t steps = input.at(0);
    const int64_t features = input.at(1);
    for (int64_t b = value.batch.begin; b < value.batch.end; ++b) {
      for (int64_t f = value.channels.begin; f < value.channels.end; ++f) {
        data[at++] = input_value(seed, b * steps * features + node.step * features + f, which);
      }
    }
    return data;
  }
  const int64_t sample = element_count(input);
  const int64_t inner = inner_count(input);
  for (int64_t b = value.batch.begin; b < value.batch.end; ++b) {
    for (int64_t e = value.channels.begin * inner; e < value.channels.end * inner; ++e) {
      // A training step's labels or targets come from their own draw, as on the cpu.
      data[at++] = node.attrs.target ? target_value(seed, b * sample + e, node.attrs.loss, node.attrs.classes)
                                     : network_input_value(seed, b * sample + e, which, node.attrs.vocab);
    }
  }
  return data;
}

HostTensor make_output_tensor(const Plan& plan) {
  const Graph& graph = *plan.graph;
  const TensorRef out = graph.output();
  const Shape& shape = graph.node(out.node).output_shapes.at(static_cast<size_t>(out.output));
  HostTensor tensor;
  tensor.shape.push_back(graph.batch());
  tensor.shape.insert(tensor.shape.end(), shape.begin(), shape.end());
  tensor.data.assign(static_cast<size_t>(graph.batch() * element_count(shape)), 0.0f);
  return tensor;
}

void place_output_value(const Plan& plan, const Value& value, const std::vector<float>& data, HostTensor& output) {
  const Shape& shape = plan.graph->node(value.node).output_shapes.at(static_cast<size_t>(value.output));
  const int64_t sample = element_count(shape);
  const int64_t inner = inner_count(shape);
  const int64_t row = value.channels.size() * inner;
  SPLITSCOPE_CHECK(static_cast<int64_t>(data.size()) == value.batch.size() * row, "output value of the wrong size");
  for (int64_t r = 0; r < value.batch.size(); ++r) {
    const float* from = data.data() + r * row;
    float* to = output.data.data() + (value.batch.begin + r) * sample + value.channels.begin * inner;
    std::copy(from, from + row, to);
  }
}

}  // namespace splitscope::gpu
