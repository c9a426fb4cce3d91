#pragma once
/// \file
/// The weights a compute op reads: its slice of params.hpp's tensors,
/// materialised once per run setup (never per repeat), and shared by every op
/// of one device that reads the same slice (the steps of a recurrent layer,
/// the micro-batches of a pipeline stage).

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "exec/cpu/kernels/parallel_for.hpp"
#include "ir/graph.hpp"
#include "ir/precision.hpp"
#include "ir/slice.hpp"
#include "plan/plan.hpp"

namespace splitscope {

/// One op's weights, each tensor laid out for the kernels:
/// - dense: W[reduce][out] (rows of the reduce range, columns of the out range);
///   the bias over `out`, only when the slice starts the reduction;
/// - conv2d: W[out filters][Cin/groups][kh][kw]; the bias over `out`;
/// - cells: Wx [I × gates·U], Wh [H × gates·U], b [gates·U], gate-major over the
///   slice's U hidden units (see recurrent_cell.hpp).
/// Indices are params.hpp's (kWeight, kBias; kInputWeight, kRecurrentWeight, kCellBias).
struct WeightSlice {
  std::vector<std::vector<float>> tensors;

  /// The tensor's data, or null when the layer (or this slice) has none.
  const float* data(int index) const {
    if (index >= static_cast<int>(tensors.size()) || tensors[static_cast<size_t>(index)].empty()) {
      return nullptr;
    }
    return tensors[static_cast<size_t>(index)].data();
  }
  int64_t bytes() const;
};

/// The slice `slice` of node `node`'s weights, for `seed`, generated across
/// `parallel` (the mlp network alone has half a billion weights).
WeightSlice materialise_weights(const Graph& graph, NodeId node, const Slice& slice, uint64_t seed,
                                ParallelFor& parallel);

/// The storage of a plan's parameter values (plan/plan.hpp): one
/// materialised slice per value, made on first request, in the format the
/// plan's precision stores weights in (stored_precision.hpp): rounded to
/// it, with the float32 masters kept beside them where the precision has
/// masters (amp) and the graph trains.
class WeightStore {
 public:
  /// `parallel` generates the weights; it must outlive every get().
  WeightStore(const Graph& graph, uint64_t seed, ParallelFor& parallel, Precision precision = Precision::kFp32)
      : graph_(graph), seed_(seed), parallel_(parallel), precision_(precision) {}

  /// The weights parameter value `params` holds (what the products read).
  std::shared_ptr<const WeightSlice> get(const Value& params);
  /// The same weights, to update in place (training: the optimizer's update
  /// op, which runs after every reader of them on its device).
  std::shared_ptr<WeightSlice> get_mutable(const Value& params);
  /// The float32 masters of those weights, which the update steps: their
  /// own slice under amp, the weights themselves (get_mutable()) otherwise.
  std::shared_ptr<WeightSlice> masters(const Value& params);
  /// The optimizer's state of `params`: `per_weight` floats a weight (SGD's
  /// momentum; Adam's two moments, one buffer after the other), zeros at
  /// first; kept between runs.
  std::vector<float>& optimizer_state(const Value& params, int per_weight);
  /// Updates applied to `params` so far (Adam's bias correction counts them).
  int64_t& updates(const Value& params) { return updates_[params.id]; }
  /// Bytes of every slice held.
  int64_t bytes() const;

 private:
  const Graph& graph_;
  uint64_t seed_;
  ParallelFor& parallel_;
  Precision precision_;
  std::map<int, std::shared_ptr<WeightSlice>> slices_;   ///< by parameter value id
  std::map<int, std::shared_ptr<WeightSlice>> masters_;  ///< by parameter value id, where kept apart
  std::map<int, std::vector<float>> state_;             ///< by parameter value id
  std::map<int, int64_t> updates_;                      ///< by parameter value id
};

}  // namespace splitscope
