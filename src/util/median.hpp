#pragma once
/// \file
/// The median every report and fit uses: the middle value, the mean of the
/// two middle values for an even count, 0 for none. nth_element, not a full
/// sort: bootstrap intervals take it thousands of times.

#include <vector>

namespace splitscope {

double median(std::vector<double> values);

}  // namespace splitscope
