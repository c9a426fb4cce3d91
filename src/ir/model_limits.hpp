#pragma once
/// \file
/// The sizes splitscope can count and hold: a model whose batch × input,
/// batch × output or parameters exceed 2^40 elements, whose FLOPs do not fit
/// 64 bits, or whose recurrent layers unroll into more ops than a run can
/// schedule in reasonable memory is refused up front (InputError, exit 2)
/// rather than wrapping around, exhausting memory or running for hours.

#include <cstdint>
#include <string>

#include "ir/model.hpp"

namespace splitscope {

inline constexpr int64_t kMaxElements = int64_t{1} << 40;
/// Ops of the lowered graph: 16 times the simulator benchmark's 8 × 8448 cells.
inline constexpr int64_t kMaxGraphOps = int64_t{1} << 20;

/// Checks `model` against the limits above. Problems of the batch are blamed
/// on `batch_option` when the batch came from one (e.g. "--batch"), else on
/// the network file's "batch" field.
void check_model_limits(const Model& model, const std::string& batch_option = "");

}  // namespace splitscope
