#pragma once
/// \file
/// How far one run's output is from a reference run's (`run --check`: this
/// strategy against `single`; the CUDA backend against the CPU one).

#include <cstdint>
#include <string>
#include <vector>

#include "exec/executor.hpp"
#include "ir/precision.hpp"

namespace splitscope {

/// The outcome of comparing two tensors of the same shape.
struct OutputComparison {
  /// max |output - reference| / max |reference| over every element; the plain
  /// max |output - reference| when the reference is all zeros; +infinity when
  /// either holds a NaN or an infinity the other does not.
  double max_relative_error = 0;
  double max_abs_error = 0;       ///< max |output - reference|
  double max_abs_reference = 0;   ///< max |reference|
  int64_t worst_index = -1;       ///< flat (C-order) index of the largest difference; -1 if none
  std::vector<int64_t> worst_position;  ///< the same index, one coordinate per axis
  float worst_output = 0;         ///< output and reference at the worst element
  float worst_reference = 0;

  /// True when max_relative_error <= tolerance.
  bool within(double tolerance) const { return max_relative_error <= tolerance; }
  /// "max relative error 3.1e-07 at [2, 7] (output 0.1234, reference 0.1235)"
  std::string describe() const;
};

/// Compares `output` with `reference`. Throws RunError naming both shapes when
/// they differ (or when a tensor's data does not match its shape).
OutputComparison compare_outputs(const HostTensor& output, const HostTensor& reference);

/// The relative tolerance `run --check` holds a strategy to against `single`.
inline constexpr double kCheckTolerance = 1e-4;

/// The same at a plan's precision, both runs storing at it (the cpu
/// backend's rounding, exec/cpu/stored_precision.hpp): fp32 kCheckTolerance;
/// fp16 1e-2 and bf16 and amp 5e-2, the bounds the cuda backend holds its
/// tf32 (10 fraction bits, as fp16) and bf16 products to. Both runs round
/// every stored value, but a sum in another order can land one step of the
/// format away (2^-10 or 2^-7 of the value at the bottom of its binade), and
/// such steps pass on through the layers and the training steps after.
double precision_check_tolerance(Precision precision);

}  // namespace splitscope
