#include "ir/shape.hpp"

#include <functional>
#include <cstdint>
#include <numeric>

namespace splitscope {

int64_t element_count(const Shape& shape) {
  // Saturates: a wrapped product of a huge shape could read as 0 ("empty") or
  // as small, and pass the size limits (model_limits.hpp) it should fail.
  int64_t count = 1;
  for (int64_t size : shape) {
    if (__builtin_mul_overflow(count, size, &count)) return INT64_MAX;
  }
  return count;
}

int64_t inner_count(const Shape& shape) {
  if (shape.empty()) return 1;
  return std::accumulate(shape.begin() + 1, shape.end(), int64_t{1}, std::multiplies<>());
}

std::string to_string(const Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

}  // namespace splitscope
