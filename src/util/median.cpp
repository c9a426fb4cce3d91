#include "util/median.hpp"

#include <algorithm>
#include <cstddef>

namespace splitscope {

double median(std::vector<double> values) {
  const size_t n = values.size();
  if (n == 0) return 0;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(values.begin(), middle, values.end());
  if (n % 2 == 1) return *middle;
  // The lower middle is the largest of the half before it.
  return (*std::max_element(values.begin(), middle) + *middle) / 2;
}

}  // namespace splitscope
