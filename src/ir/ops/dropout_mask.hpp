#pragma once
/// \file
/// Dropout's mask, one rule for every backend and the test oracle: whether
/// element `element` of a layer's output [batch, ...] is kept. A pure function
/// of the layer's index and the element's position in the whole batch, so
/// every slice of the op (by samples or channels), every step and every
/// backend draws the same mask, and the backward pass reapplies it.

#include <cstdint>

#if defined(__CUDACC__)
#define SPLITSCOPE_HOST_DEVICE __host__ __device__
#else
#define SPLITSCOPE_HOST_DEVICE
#endif

namespace splitscope {

SPLITSCOPE_HOST_DEVICE inline uint64_t dropout_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Kept with probability 1 - rate: 24 random bits against the rate.
SPLITSCOPE_HOST_DEVICE inline bool dropout_keeps(int layer, int64_t element, float rate) {
  const uint64_t bits = dropout_mix(dropout_mix(static_cast<uint64_t>(layer) + 0x5eedULL) ^ static_cast<uint64_t>(element));
  return static_cast<float>(bits >> 40) * (1.0f / 16777216.0f) >= rate;
}

}  // namespace splitscope
