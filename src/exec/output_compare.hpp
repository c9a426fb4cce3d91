#pragma once
/// \file
/// How far one run's output is from a reference run's (`run --check`: this
/// strategy against `single`; the CUDA backend against the CPU one).

#include <cstdint>
#include <string>
#include <vector>

#include "exec/executor.hpp"

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

}  // namespace splitscope
