#pragma once
/// \file
/// Whole tiles, waves or chunks of size b that cover a: one definition for
/// the cost rules that count them (a unity build joins their sources).

#include <cstdint>

namespace splitscope {

/// ⌈a / b⌉ for a >= 0, b > 0.
constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace splitscope
