#include "ir/model_limits.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <stdexcept>

#include "ir/layer_costs.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

// Ops the lowering makes of a layer: one, or one cell per (stacked layer, step)
// and a step slice. Saturates rather than wraps: 2^40 stacked layers × 2^40
// steps must still read as "too many".
int64_t ops_of(const Layer& layer) {
  if (!is_recurrent(layer.kind)) return 1;
  int64_t cells = 0;
  if (__builtin_mul_overflow(layer.stacked, layer.input_shape.at(0), &cells)) return INT64_MAX;
  return cells == INT64_MAX ? cells : cells + 1;
}

}  // namespace

void check_model_limits(const Model& model, const std::string& batch_option) {
  const auto fail_batch = [&](const std::string& problem) {
    if (batch_option.empty()) throw InputError(model.source, "batch", problem);
    throw InputError(batch_option, "", problem);
  };
  const int64_t batch = model.batch;
  if (batch > kMaxElements || element_count(model.input) > kMaxElements / batch) {
    fail_batch(fmt::format("batch {} × input {} is too large (at most 2^40 elements)", batch, to_string(model.input)));
  }
  int64_t ops = 0;
  for (size_t i = 0; i < model.layers.size(); ++i) {
    const Layer& layer = model.layers[i];
    const std::string field = fmt::format("layers[{}]", i);
    // First: the op count is cheap, and it bounds everything else a layer costs.
    ops = std::min(kMaxGraphOps + 1, ops + std::min(ops_of(layer), kMaxGraphOps + 1));
    if (ops > kMaxGraphOps) {
      throw InputError(model.source, field,
                       fmt::format("brings the unrolled network past {} ops, more than a run can schedule; use fewer "
                                   "steps or stacked layers",
                                   kMaxGraphOps));
    }
    if (element_count(layer.output_shape) > kMaxElements / batch) {
      fail_batch(fmt::format("batch {} × the output {} of {} is too large (at most 2^40 elements)", batch,
                             to_string(layer.output_shape), field));
    }
    try {
      if (layer_params(layer) > kMaxElements) {
        throw InputError(model.source, field,
                         fmt::format("has {} parameters, more than splitscope holds (2^40)", layer_params(layer)));
      }
      layer_flops(layer, batch);
    } catch (const std::overflow_error&) {
      if (!batch_option.empty()) fail_batch(fmt::format("makes the FLOPs of {} overflow 64 bits", field));
      throw InputError(model.source, field, "is too large: its parameter or FLOP count overflows 64 bits");
    }
  }
}

}  // namespace splitscope
