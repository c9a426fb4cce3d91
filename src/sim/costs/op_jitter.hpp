#pragma once
/// \file
/// Per-op noise on predicted compute times (`--jitter lognormal:SIGMA`): so
/// that a prediction shows what a real machine's variance costs a plan whose
/// devices wait for each other (a synchronous step ends with its slowest
/// device). Each compute, epilogue and update op of repeat r takes its priced
/// time times exp(SIGMA z - SIGMA^2 / 2), z a standard normal drawn from
/// (seed, r, op id) alone: the factor has mean 1 (the expected work is the
/// noiseless prediction's) and median exp(-SIGMA^2 / 2), the same for the
/// same op of the same repeat whatever else the plan holds, and repeats
/// differ.

#include <cstdint>

namespace splitscope {

class OpJitter {
 public:
  /// `sigma` >= 0 (0: every factor is 1).
  OpJitter(double sigma, uint64_t seed, int repeat) : sigma_(sigma), seed_(seed), repeat_(repeat) {}
  /// The factor on op `op`'s priced time.
  double factor(int op) const;
  /// The standard normal behind factor(op).
  double normal(int op) const;

 private:
  double sigma_;
  uint64_t seed_;
  int repeat_;
};

}  // namespace splitscope
