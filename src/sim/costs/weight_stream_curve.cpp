#include "sim/costs/weight_stream_curve.hpp"

#include <algorithm>

namespace splitscope {

WeightStreamCurve WeightStreamCurve::of(const std::vector<WeightStreamRate>& rates, int threads, int running) {
  WeightStreamCurve busy;
  WeightStreamCurve alone;
  for (const WeightStreamRate& rate : rates) {
    if (rate.threads != threads || rate.gbps <= 0) continue;
    const std::pair<int64_t, double> point{rate.rows, 1.0 / (rate.gbps * 1e9)};
    if (rate.running == running) busy.points_.push_back(point);
    if (rate.running == 1) alone.points_.push_back(point);
  }
  WeightStreamCurve& curve = busy.empty() ? alone : busy;
  std::sort(curve.points_.begin(), curve.points_.end());
  return curve;
}

double WeightStreamCurve::seconds_per_byte(int64_t rows) const {
  if (points_.empty()) return 0;
  if (rows <= points_.front().first) return points_.front().second;
  for (size_t i = 1; i < points_.size(); ++i) {
    const auto& [high_rows, high] = points_[i];
    if (rows > high_rows) continue;
    const auto& [low_rows, low] = points_[i - 1];
    const double t = static_cast<double>(rows - low_rows) / static_cast<double>(high_rows - low_rows);
    return low + t * (high - low);
  }
  return points_.back().second;
}

}  // namespace splitscope
