#include "report/chart_ticks.hpp"

#include <cmath>
#include <initializer_list>

namespace splitscope {

double nice_tick_step(double range, int target) {
  const double raw = range / target;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 5.0}) {
    if (raw <= factor * power) return factor * power;
  }
  return 10.0 * power;
}

}  // namespace splitscope
