#include "exec/cpu/weight_slices.hpp"

#include <fmt/format.h>

#include "exec/cpu/stored_precision.hpp"
#include "ir/params.hpp"
#include "util/check.hpp"

namespace splitscope {
namespace {

/// Rows of weights generated per chunk of the parallel loop.
constexpr int64_t kRowsPerChunk = 16;

/// out[r][c] = tensor element (row0 + r)·columns + column(c), for a row-major tensor.
template <typename Column>
std::vector<float> gather(ParallelFor& parallel, const ParamElements& elements, Range rows, int64_t columns,
                          int64_t width, Column column) {
  std::vector<float> out(static_cast<size_t>(rows.size() * width));
  parallel.run(rows.size(), kRowsPerChunk, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      for (int64_t c = 0; c < width; ++c) {
        out[static_cast<size_t>(r * width + c)] = elements((rows.begin + r) * columns + column(c));
      }
    }
  });
  return out;
}

/// A feature-cut product's weights (the tensor strategy's head-wise split of
/// a linear op, ir/feature_cut.hpp): W [in, units] cut along its rows (a row
/// split, contiguous) or its columns (the units, `blocks` blocks alike: a
/// QKV projection's heads in each of Q, K and V), end to end; the bias cut
/// as the columns, held only by the slice that starts a row split.
WeightSlice feature_cut_weights(ParallelFor& parallel, const Graph& graph, NodeId id, uint64_t seed,
                                const std::vector<ParamTensor>& params, const FeatureCut& cut) {
  const int64_t inputs = params[kWeight].shape.at(0);
  const int64_t units = params[kWeight].shape.at(1);
  const Range rows = cut.rows ? cut.range : Range{0, inputs};
  const int64_t width = cut.rows ? units : cut.count(units);
  const int64_t block = units / cut.blocks;
  const auto column = [&](int64_t c) {
    if (cut.rows) return c;
    return (c / cut.range.size()) * block + cut.range.begin + c % cut.range.size();
  };
  WeightSlice weights;
  weights.tensors.resize(params.size());
  weights.tensors[kWeight] =
      gather(parallel, ParamElements(graph, id, kWeight, seed), rows, units, width, column);
  if (params.size() > kBias && (!cut.rows || cut.range.begin == 0)) {
    weights.tensors[kBias] = gather(parallel, ParamElements(graph, id, kBias, seed), {0, 1}, 0, width, column);
  }
  return weights;
}

}  // namespace

int64_t WeightSlice::bytes() const {
  int64_t total = 0;
  for (const auto& tensor : tensors) total += static_cast<int64_t>(tensor.size() * sizeof(float));
  return total;
}

WeightSlice materialise_weights(const Graph& graph, NodeId id, const Slice& slice, uint64_t seed,
                                ParallelFor& parallel) {
  const OpNode& node = graph.node(id);
  const std::vector<ParamTensor> params = param_tensors(graph, id);
  WeightSlice weights;
  if (params.empty()) return weights;
  const auto elements = [&](int tensor) { return ParamElements(graph, id, tensor, seed); };
  const Range out = slice.out;
  if (!slice.features.whole()) return feature_cut_weights(parallel, graph, id, seed, params, slice.features);
  weights.tensors.resize(params.size());
  if (const auto range_of = op_def(node.kind).param_range) {
    // 1-D tensors, each a range of its elements (a normalization's gamma and beta).
    for (size_t t = 0; t < params.size(); ++t) {
      const Range range = range_of(node, slice, static_cast<int>(t));
      const ParamElements tensor = elements(static_cast<int>(t));
      std::vector<float>& values = weights.tensors[t];
      values.resize(static_cast<size_t>(range.size()));
      for (int64_t i = 0; i < range.size(); ++i) values[static_cast<size_t>(i)] = tensor(range.begin + i);
    }
    return weights;
  }
  if (node.kind == OpKind::kDense) {
    const int64_t units = params[kWeight].shape.at(1);
    weights.tensors[kWeight] = gather(parallel, elements(kWeight), slice.reduce, units, out.size(),
                                      [&](int64_t c) { return out.begin + c; });
    // A row-split product adds the bias once, in the slice that starts the reduction.
    if (params.size() > kBias && slice_carries_bias(node, slice.reduce)) {
      weights.tensors[kBias] = gather(parallel, elements(kBias), {0, 1}, 0, out.size(),
                                      [&](int64_t c) { return out.begin + c; });
    }
    return weights;
  }
  if (node.kind == OpKind::kConv2d) {
    const Shape& shape = params[kWeight].shape;
    const int64_t per_filter = shape.at(1) * shape.at(2) * shape.at(3);
    weights.tensors[kWeight] = gather(parallel, elements(kWeight), out, per_filter, per_filter,
                                      [](int64_t c) { return c; });
    if (params.size() > kBias) {
      weights.tensors[kBias] = gather(parallel, elements(kBias), {0, 1}, 0, out.size(),
                                      [&](int64_t c) { return out.begin + c; });
    }
    return weights;
  }
  SPLITSCOPE_CHECK(is_cell(node.kind), "weights of an unexpected op kind " + std::string(to_string(node.kind)));
  // Gate-major columns of the slice: column g·U + u is column g·H + out.begin + u of the whole tensor.
  const int64_t hidden = node.attrs.hidden;
  const int64_t gates = params[kInputWeight].shape.at(1) / hidden;
  const int64_t units = out.size();
  const auto column = [&](int64_t c) { return (c / units) * hidden + out.begin + c % units; };
  const int64_t width = gates * units;
  const int64_t all_columns = gates * hidden;
  weights.tensors[kInputWeight] = gather(parallel, elements(kInputWeight),
                                         {0, params[kInputWeight].shape.at(0)}, all_columns, width, column);
  weights.tensors[kRecurrentWeight] = gather(parallel, elements(kRecurrentWeight),
                                             {0, hidden}, all_columns, width, column);
  if (params.size() > kCellBias) {
    weights.tensors[kCellBias] = gather(parallel, elements(kCellBias), {0, 1}, 0, width, column);
  }
  return weights;
}

std::shared_ptr<const WeightSlice> WeightStore::get(const Value& params) { return get_mutable(params); }

std::shared_ptr<WeightSlice> WeightStore::get_mutable(const Value& params) {
  SPLITSCOPE_CHECK(params.role == ValueRole::kParameter, fmt::format("value {} holds no weights", params.id));
  auto found = slices_.find(params.id);
  if (found != slices_.end()) return found->second;
  const Slice slice{{0, 1}, params.channels, params.reduce, params.features};  // the rows do not matter to weights
  auto weights = std::make_shared<WeightSlice>(materialise_weights(graph_, params.node, slice, seed_, parallel_));
  const StoredFormats formats = stored_formats(precision_);
  // Masters are for the update: an inference run at amp keeps none (the plan counts none).
  if (formats.keeps_masters && graph_.is_training()) {
    masters_.emplace(params.id, std::make_shared<WeightSlice>(*weights));
  }
  for (std::vector<float>& tensor : weights->tensors) round_in_place(formats.weight, tensor);
  slices_.emplace(params.id, weights);
  return weights;
}

std::shared_ptr<WeightSlice> WeightStore::masters(const Value& params) {
  std::shared_ptr<WeightSlice> weights = get_mutable(params);
  const auto found = masters_.find(params.id);
  return found != masters_.end() ? found->second : weights;
}

std::vector<float>& WeightStore::optimizer_state(const Value& params, int per_weight) {
  auto found = state_.find(params.id);
  if (found != state_.end()) return found->second;
  const auto weights = get(params);
  const size_t floats = static_cast<size_t>(weights->bytes()) / sizeof(float) * static_cast<size_t>(per_weight);
  return state_.emplace(params.id, std::vector<float>(floats, 0.0f)).first->second;
}

int64_t WeightStore::bytes() const {
  int64_t total = 0;
  for (const auto& [key, slice] : slices_) total += slice->bytes();
  return total;
}

}  // namespace splitscope
