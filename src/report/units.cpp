#include "report/units.hpp"

#include <fmt/format.h>

#include <cmath>

namespace splitscope {

std::string format_ms(double ms) {
  if (std::fabs(ms) < 1.0) return fmt::format("{:.1f} us", ms * 1000.0);
  if (std::fabs(ms) < 1000.0) return fmt::format("{:.3f} ms", ms);
  return fmt::format("{:.3f} s", ms / 1000.0);
}

std::string format_share(double share) {
  // A share that rounds to 0 but is not 0 says so: "0%" would read as "none".
  if (share > 0 && share < 0.005) return "<1%";
  return fmt::format("{:.0f}%", share * 100.0);
}

std::string format_speedup(double speedup) {
  // Two decimals read well from 0.1x up; below, they would print 0.00x for a
  // run hundreds of times slower: two significant digits say how much.
  if (speedup > 0 && speedup < 0.1) return fmt::format("{:.2g}x", speedup);
  return fmt::format("{:.2f}x", speedup);
}

std::string format_gbps(double gbps) {
  if (gbps >= 1.0 || gbps == 0.0) return fmt::format("{:.2f} GB/s", gbps);
  return fmt::format("{:.3g} GB/s", gbps);
}

}  // namespace splitscope
