#include "ir/shape.hpp"

#include <functional>
#include <numeric>

namespace splitscope {

int64_t element_count(const Shape& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
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
