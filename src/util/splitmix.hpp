#pragma once
/// \file
/// SplitMix64's finaliser (Steele, Lea and Flood, 2014): a counter-based
/// generator. A draw is a function of its key alone, so a value drawn for
/// (seed, op) or (seed, tensor, element) is the same whatever else is drawn,
/// in whatever order: the weights and inputs (ir/params) and the simulator's
/// per-op noise (sim/op_jitter) rely on that.

#include <cstdint>

namespace splitscope {

constexpr uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace splitscope
