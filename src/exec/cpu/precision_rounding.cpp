#include "exec/cpu/precision_rounding.hpp"

#include <bit>
#include <cmath>
#include <limits>

namespace splitscope {
namespace {

// Dropping the low `dropped` bits of a float32 with round to nearest, ties
// to even: add just under half of the dropped unit, plus one if the kept
// part is odd, then clear them. A carry into the exponent is the correct
// rounding up to the next binade (or to infinity past the largest value).
uint32_t round_off_low_bits(uint32_t bits, int dropped) {
  const uint32_t half_below = (1u << (dropped - 1)) - 1;
  const uint32_t odd = (bits >> dropped) & 1u;
  return (bits + half_below + odd) & ~((1u << dropped) - 1);
}

constexpr float kFloat16SmallestNormal = 0x1p-14f;
// Half a step above float16's largest finite value 65504: ties go to the
// even 65536, which float16 cannot hold, so from here on it is infinity.
constexpr float kFloat16Overflow = 65520.0f;

}  // namespace

float round_to_bfloat16(float x) {
  if (std::isnan(x)) return x;
  return std::bit_cast<float>(round_off_low_bits(std::bit_cast<uint32_t>(x), 16));
}

float round_to_float16(float x) {
  if (std::isnan(x)) return x;
  const float magnitude = std::fabs(x);
  if (magnitude >= kFloat16Overflow) return std::copysign(std::numeric_limits<float>::infinity(), x);
  if (magnitude >= kFloat16SmallestNormal) {
    return std::bit_cast<float>(round_off_low_bits(std::bit_cast<uint32_t>(x), 13));
  }
  // Subnormal steps of 2^-24: in [0.5, 1) float32's own step is 2^-24, so
  // adding 0.5 rounds (to nearest even, the hardware's mode) onto that grid,
  // and subtracting it again is exact.
  // (IEEE arithmetic, no -ffast-math: the compiler keeps both operations.)
  const float on_grid = (magnitude + 0.5f) - 0.5f;
  return std::copysign(on_grid, x);
}

float round_to(NumberFormat format, float x) {
  switch (format) {
    case NumberFormat::kFloat32: return x;
    case NumberFormat::kBfloat16: return round_to_bfloat16(x);
    case NumberFormat::kFloat16: return round_to_float16(x);
  }
  return x;
}

void round_in_place(NumberFormat format, std::span<float> values) {
  switch (format) {
    case NumberFormat::kFloat32: return;
    case NumberFormat::kBfloat16:
      for (float& value : values) value = round_to_bfloat16(value);
      return;
    case NumberFormat::kFloat16:
      for (float& value : values) value = round_to_float16(value);
      return;
  }
}

const char* to_string(NumberFormat format) {
  switch (format) {
    case NumberFormat::kFloat32: return "float32";
    case NumberFormat::kBfloat16: return "bfloat16";
    case NumberFormat::kFloat16: return "float16";
  }
  return "?";
}

}  // namespace splitscope
