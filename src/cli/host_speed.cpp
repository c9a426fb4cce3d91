// The host's speed now against its calibration (host_speed.hpp).

#include "cli/host_speed.hpp"

#include <algorithm>

#include "util/median.hpp"

namespace splitscope::cli {
namespace {

bool has_one_thread_grid(const std::vector<GemmRatePoint>& rates) {
  return std::any_of(rates.begin(), rates.end(), [](const GemmRatePoint& p) { return p.threads == 1 && p.running == 1; });
}

}  // namespace

std::optional<double> host_speed_ratio(const std::vector<GemmRatePoint>& rates,
                                       const std::vector<std::pair<SgemmShape, double>>& timed) {
  if (timed.empty() || !has_one_thread_grid(rates) || !gemm_grid_problem(rates).empty()) return std::nullopt;
  const GemmRateCurve curve(rates, 1, 1);
  std::vector<double> ratios;
  for (const auto& [shape, seconds] : timed) {
    if (seconds > 0) ratios.push_back(curve.seconds(shape.m, shape.n, shape.k) / seconds);
  }
  if (ratios.empty()) return std::nullopt;
  return median(ratios);
}

std::optional<double> host_speed_now(const std::vector<GemmRatePoint>& rates) {
  if (!has_one_thread_grid(rates)) return std::nullopt;
  std::vector<std::pair<SgemmShape, double>> timed;
  for (const SgemmShape& shape : host_speed_shapes()) timed.emplace_back(shape, time_one_thread_sgemm(shape));
  return host_speed_ratio(rates, timed);
}

}  // namespace splitscope::cli
