#include "exec/cpu/stored_precision.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "ir/graph.hpp"
#include "util/check.hpp"

namespace splitscope {

StoredFormats stored_formats(Precision precision) {
  StoredFormats formats;
  const auto every_class = [&formats](NumberFormat format) {
    formats.activation = formats.weight = formats.gradient = formats.optimizer_state = format;
  };
  switch (precision) {
    case Precision::kFp32:
    case Precision::kTf32: break;
    case Precision::kBf16: every_class(NumberFormat::kBfloat16); break;
    case Precision::kFp16: every_class(NumberFormat::kFloat16); break;
    case Precision::kAmp:
      formats.activation = formats.weight = formats.gradient = NumberFormat::kBfloat16;
      formats.keeps_masters = true;
      break;
  }
  return formats;
}

NumberFormat value_format(const Plan& plan, const Value& value) {
  const StoredFormats formats = stored_formats(plan.precision);
  switch (value.role) {
    case ValueRole::kActivation: return formats.activation;
    case ValueRole::kParameter: return formats.weight;
    case ValueRole::kGradient: return formats.gradient;
  }
  return formats.activation;
}

TaskFunction storing_outputs(const Plan& plan, const PlanOp& op, ValueBuffers& buffers, TaskFunction work) {
  struct RoundedOutput {
    NumberFormat format;
    std::span<float> values;
  };
  std::vector<RoundedOutput> rounded;
  for (int id : op.outputs) {
    const NumberFormat format = value_format(plan, plan.value(id));
    if (format == NumberFormat::kFloat32 || !buffers.holds(id)) continue;
    const ChannelBlock block = buffers.block(id);
    rounded.push_back({format, {block.data, static_cast<size_t>(block.floats())}});
  }
  if (rounded.empty()) return work;
  return [work = std::move(work), rounded = std::move(rounded)](TaskContext& context) {
    work(context);
    for (const RoundedOutput& output : rounded) round_in_place(output.format, output.values);
  };
}

void round_network_inputs(const Plan& plan, ValueBuffers& buffers) {
  for (int id : plan.inputs) {
    if (!buffers.holds(id)) continue;
    const Value& value = plan.value(id);
    const OpNode& node = plan.graph->node(value.node);
    if (node.kind == OpKind::kInput && (node.attrs.target || node.attrs.vocab > 0)) continue;
    const ChannelBlock block = buffers.block(id);
    round_in_place(value_format(plan, value), {block.data, static_cast<size_t>(block.floats())});
  }
}

void store_update(const StoredFormats& formats, const WeightSlice& masters, WeightSlice& weights,
                  std::span<float> state) {
  round_in_place(formats.optimizer_state, state);
  if (&masters == &weights) {
    for (std::vector<float>& tensor : weights.tensors) round_in_place(formats.weight, tensor);
    return;
  }
  SPLITSCOPE_CHECK(masters.tensors.size() == weights.tensors.size(), "masters and weight copy differ in tensors");
  for (size_t t = 0; t < weights.tensors.size(); ++t) {
    const std::vector<float>& master = masters.tensors[t];
    std::vector<float>& copy = weights.tensors[t];
    SPLITSCOPE_CHECK(master.size() == copy.size(), "a master tensor and its copy differ in size");
    std::transform(master.begin(), master.end(), copy.begin(),
                   [format = formats.weight](float w) { return round_to(format, w); });
  }
}

}  // namespace splitscope
