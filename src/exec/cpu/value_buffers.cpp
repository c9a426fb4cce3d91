#include "exec/cpu/value_buffers.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "exec/cpu/collectives.hpp"
#include "ir/params.hpp"
#include "util/check.hpp"

namespace splitscope {

ValueBuffers::ValueBuffers(const Plan& plan) : ValueBuffers(plan, [](const Value&) { return true; }) {}

ValueBuffers::ValueBuffers(const Plan& plan, const std::function<bool(const Value&)>& keep) {
  storage_.reserve(plan.values.size());
  blocks_.reserve(plan.values.size());
  for (const Value& value : plan.values) {
    SPLITSCOPE_CHECK(value.id == static_cast<int>(blocks_.size()), "plan values out of order");
    if (value.role == ValueRole::kParameter || !keep(value)) {
      // Weights live in the WeightStore, laid out for the kernels; values `keep` refuses nowhere.
      storage_.emplace_back();
      blocks_.push_back(ChannelBlock{});
      continue;
    }
    ChannelBlock block = value_layout(plan, value);
    storage_.emplace_back(static_cast<size_t>(block.floats()), 0.0f);
    block.data = storage_.back().data();
    blocks_.push_back(block);
    bytes_ += block.floats() * static_cast<int64_t>(sizeof(float));
  }
}

ChannelBlock value_layout(const Plan& plan, const Value& value) {
  SPLITSCOPE_CHECK(value.role != ValueRole::kParameter, "parameter values live in the WeightStore");
  if (value.role == ValueRole::kGradient) return ChannelBlock{nullptr, 1, {0, value_elements(*plan.graph, value)}, 1};
  const Shape& shape = plan.graph->node(value.node).output_shapes.at(static_cast<size_t>(value.output));
  return ChannelBlock{nullptr, value.batch.size(), value.channels, inner_count(shape)};
}

void fill_network_inputs(const Plan& plan, uint64_t seed, ValueBuffers& buffers) {
  for (int id : plan.inputs) {
    if (!buffers.holds(id)) continue;
    const Value& value = plan.value(id);
    const OpNode& node = plan.graph->node(value.node);
    SPLITSCOPE_CHECK(value.producer < 0, "network input value " + std::to_string(id) + " has a producer");
    if (node.kind != OpKind::kInput) {
      // A stand-in for an upstream op's output (a calibration plan times one
      // op alone, partitioners/op_samples.hpp): any data of the right size
      // and range will do, as on the GPU.
      const ChannelBlock block = buffers.block(id);
      const int64_t floats = block.floats();
      for (int64_t i = 0; i < floats; ++i) block.data[i] = input_value(seed, i);
      continue;
    }
    const Shape& sample = node.attrs.sample;
    const int64_t sample_floats = element_count(sample);
    const int input = node.attrs.input_index;
    const ChannelBlock block = buffers.block(id);
    if (node.attrs.target) {
      // The loss's labels or targets: the same rows of the same draw on any device.
      for (int64_t row = 0; row < block.rows; ++row) {
        const int64_t first = (value.batch.begin + row) * sample_floats;
        for (int64_t i = 0; i < block.row_floats(); ++i) {
          block.data[row * block.row_floats() + i] =
              target_value(seed, first + block.channels.begin * block.inner + i, node.attrs.loss, node.attrs.classes);
        }
      }
      continue;
    }
    // A step input t of a [T, F] sequence holds x[b, t, :]: channel f sits at t·F + f.
    const int64_t channel_offset = node.step >= 0 ? node.step * sample.at(1) : 0;
    for (int64_t row = 0; row < block.rows; ++row) {
      const int64_t b = value.batch.begin + row;
      for (int64_t c = block.channels.begin; c < block.channels.end; ++c) {
        float* out = block.at(row, c);
        const int64_t first = b * sample_floats + channel_offset + c * block.inner;
        for (int64_t i = 0; i < block.inner; ++i) out[i] = network_input_value(seed, first + i, input, node.attrs.vocab);
      }
    }
  }
}

HostTensor network_input(const Graph& graph, uint64_t seed) {
  HostTensor input;
  input.shape.push_back(graph.batch());
  for (int64_t extent : graph.model().input) input.shape.push_back(extent);
  input.data.resize(static_cast<size_t>(graph.batch() * element_count(graph.model().input)));
  for (size_t i = 0; i < input.data.size(); ++i) input.data[i] = input_value(seed, static_cast<int64_t>(i));
  return input;
}

HostTensor assemble_output(const Plan& plan, const ValueBuffers& buffers) {
  const TensorRef tensor = plan.graph->output();
  const Shape& sample = plan.graph->node(tensor.node).output_shapes.at(static_cast<size_t>(tensor.output));
  HostTensor output;
  output.shape.push_back(plan.graph->batch());
  output.shape.insert(output.shape.end(), sample.begin(), sample.end());
  output.data.assign(static_cast<size_t>(plan.graph->batch() * element_count(sample)), 0.0f);
  const ChannelBlock whole{nullptr, 1, {0, sample.at(0)}, inner_count(sample)};
  int64_t covered = 0;
  for (int id : plan.outputs) {
    const Value& value = plan.value(id);
    SPLITSCOPE_CHECK(value.node == tensor.node && value.output == tensor.output && !value.is_partial() &&
                         !value.pre_activation,
                     fmt::format("plan output value {} is not the network output", id));
    SPLITSCOPE_CHECK(value.batch.begin >= 0 && value.batch.end <= plan.graph->batch(),
                     "plan output rows " + value.batch.to_string() + " outside the batch");
    const ConstChannelBlock block = buffers.block(id);
    if (!value.features.whole()) {
      // A vocabulary shard (tensor's output layer): each sample's cut lies end
      // to end at the start of its row (ir/feature_cut.hpp); put each
      // channel's features where they lie in the whole.
      const FeatureCut& cut = value.features;
      const int64_t kept = cut.count(whole.inner);
      const int64_t block_width = whole.inner / cut.blocks;
      for (int64_t row = 0; row < block.rows; ++row) {
        for (int64_t channel = block.channels.begin; channel < block.channels.end; ++channel) {
          const float* from = block.data + row * block.row_floats() + (channel - block.channels.begin) * kept;
          float* to = output.data.data() + (value.batch.begin + row) * whole.row_floats() + channel * whole.inner;
          for (int64_t f = 0; f < kept; ++f) {
            to[(f / cut.range.size()) * block_width + cut.range.begin + f % cut.range.size()] = from[f];
          }
        }
      }
      covered += block.rows * block.channels.size() * kept;
      continue;
    }
    covered += block.floats();
    for (int64_t row = 0; row < block.rows; ++row) {
      const ConstChannelBlock from{block.at(row, block.channels.begin), 1, block.channels, block.inner};
      ChannelBlock to = whole;
      to.data = output.data.data() + (value.batch.begin + row) * whole.row_floats();
      copy_channels(from, to);
    }
  }
  SPLITSCOPE_CHECK(covered == static_cast<int64_t>(output.data.size()),
                   fmt::format("plan outputs cover {} of the {} output elements", covered, output.data.size()));
  return output;
}

}  // namespace splitscope
