#include "exec/output_compare.hpp"

#include <cmath>
#include <fmt/format.h>
#include <limits>

#include "ir/shape.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) { return to_string(Shape(shape.begin(), shape.end())); }

void check_size(const HostTensor& tensor, const char* which) {
  if (static_cast<int64_t>(tensor.data.size()) != element_count(Shape(tensor.shape.begin(), tensor.shape.end()))) {
    throw RunError(fmt::format("the {} holds {} elements, but its shape {} has {}", which, tensor.data.size(),
                               shape_text(tensor.shape), element_count(Shape(tensor.shape.begin(), tensor.shape.end()))));
  }
}

std::vector<int64_t> unflatten(int64_t index, const std::vector<int64_t>& shape) {
  std::vector<int64_t> position(shape.size(), 0);
  for (size_t axis = shape.size(); axis-- > 0;) {
    position[axis] = index % shape[axis];
    index /= shape[axis];
  }
  return position;
}

}  // namespace

std::string OutputComparison::describe() const {
  if (worst_index < 0) return fmt::format("max relative error {:.3g} (no elements differ)", max_relative_error);
  return fmt::format("max relative error {:.3g} at {} (output {:.9g}, reference {:.9g})", max_relative_error,
                     shape_text(worst_position), worst_output, worst_reference);
}

OutputComparison compare_outputs(const HostTensor& output, const HostTensor& reference) {
  if (output.shape != reference.shape) {
    throw RunError(fmt::format("cannot compare outputs of different shapes: {} against the reference's {}",
                               shape_text(output.shape), shape_text(reference.shape)));
  }
  check_size(output, "output");
  check_size(reference, "reference");
  OutputComparison result;
  bool non_finite = false;
  for (size_t i = 0; i < output.data.size(); ++i) {
    const double a = output.data[i];
    const double b = reference.data[i];
    result.max_abs_reference = std::max(result.max_abs_reference, std::abs(b));
    // A NaN compares false with everything, so a non-finite value that differs is looked for on its own.
    const bool bad = (!std::isfinite(a) || !std::isfinite(b)) && !(a == b);
    const double difference = bad ? std::numeric_limits<double>::infinity() : std::abs(a - b);
    if (!bad && !(difference > result.max_abs_error)) continue;
    if (non_finite) continue;  // the first bad element is the one reported
    non_finite = bad;
    result.max_abs_error = difference;
    result.worst_index = static_cast<int64_t>(i);
  }
  if (result.worst_index >= 0) {
    result.worst_position = unflatten(result.worst_index, output.shape);
    result.worst_output = output.data[static_cast<size_t>(result.worst_index)];
    result.worst_reference = reference.data[static_cast<size_t>(result.worst_index)];
  }
  result.max_relative_error = result.max_abs_reference > 0 ? result.max_abs_error / result.max_abs_reference
                                                           : result.max_abs_error;
  return result;
}

double precision_check_tolerance(Precision precision) {
  switch (precision) {
    case Precision::kFp32: return kCheckTolerance;
    case Precision::kTf32:
    case Precision::kFp16: return 1e-2;
    case Precision::kBf16:
    case Precision::kAmp: return 5e-2;
  }
  return kCheckTolerance;
}

}  // namespace splitscope
