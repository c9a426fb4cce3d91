#pragma once
/// \file
/// The number formats a plan stores its tensors in (ir/precision.hpp), as
/// the cpu backend emulates them: a value keeps a float32 slot, and every
/// write of it is rounded to the format's nearest value (round to nearest,
/// ties to even) within the format's range: bfloat16 keeps float32's
/// exponent and 8 significand bits; float16 keeps 11 significand bits,
/// overflows to infinity from 65520 (the midpoint above its largest finite
/// value, 65504) and has subnormals down to 2^-24. The arithmetic between
/// two writes stays float32, so a run reproduces what storing at the format
/// loses, not a GPU's tensor-core accumulation order (docs/precision.md).

#include <cstdint>
#include <span>

namespace splitscope {

enum class NumberFormat : uint8_t {
  kFloat32,   ///< stored as computed
  kBfloat16,  ///< 1 sign, 8 exponent, 7 fraction bits
  kFloat16,   ///< IEEE binary16: 1 sign, 5 exponent, 10 fraction bits
};

/// `x` rounded to the nearest bfloat16 (ties to even); NaN stays NaN.
float round_to_bfloat16(float x);
/// `x` rounded to the nearest float16 (ties to even), ±infinity from
/// |x| ≥ 65520, subnormal steps of 2^-24 below 2^-14; NaN stays NaN.
float round_to_float16(float x);
/// `x` rounded to `format` (itself for float32).
float round_to(NumberFormat format, float x);
/// Rounds every element of `values` to `format`, in place (nothing for float32).
void round_in_place(NumberFormat format, std::span<float> values);
/// "float32", "bfloat16", "float16"
const char* to_string(NumberFormat format);

}  // namespace splitscope
