#include "sim/costs/op_jitter.hpp"

#include <cmath>
#include <numbers>

#include "util/splitmix.hpp"

namespace splitscope {
namespace {

/// A uniform in (0, 1) from 53 random bits.
double uniform(uint64_t bits) { return (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53; }

}  // namespace

// Counter-based (util/splitmix.hpp): an op's draw depends on (seed, repeat,
// op) only, not on the order the engine prices ops in.
double OpJitter::normal(int op) const {
  const uint64_t key = splitmix64(splitmix64(seed_ ^ 0x6a09e667f3bcc908ULL) + static_cast<uint64_t>(repeat_)) +
                       static_cast<uint64_t>(static_cast<uint32_t>(op));
  const double u1 = uniform(splitmix64(key));
  const double u2 = uniform(splitmix64(key ^ 0xbb67ae8584caa73bULL));
  // Box-Muller.
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double OpJitter::factor(int op) const {
  if (sigma_ == 0) return 1.0;
  return std::exp(sigma_ * normal(op) - sigma_ * sigma_ / 2);
}

}  // namespace splitscope
