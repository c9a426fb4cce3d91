#include "sim/costs/gemm_rate_curve.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "util/check.hpp"

namespace splitscope {
namespace {

std::vector<double> distinct_log2(const std::vector<GemmRatePoint>& points, int64_t GemmRatePoint::*dimension) {
  std::set<int64_t> values;
  for (const GemmRatePoint& point : points) values.insert(point.*dimension);
  std::vector<double> logs;
  for (const int64_t value : values) logs.push_back(std::log2(static_cast<double>(value)));
  return logs;
}

size_t index_of(const std::vector<double>& axis, int64_t value) {
  const double log = std::log2(static_cast<double>(value));
  return static_cast<size_t>(std::lower_bound(axis.begin(), axis.end(), log) - axis.begin());
}

/// The grid of one thread count.
std::string one_grid_problem(const std::vector<GemmRatePoint>& points) {
  std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
  std::set<int64_t> ms, ns, ks;
  for (const GemmRatePoint& p : points) {
    if (p.m <= 0 || p.n <= 0 || p.k <= 0) return fmt::format("shape {}x{}x{} has a dimension below 1", p.m, p.n, p.k);
    if (!(p.gflops > 0) || !std::isfinite(p.gflops)) {
      return fmt::format("shape {}x{}x{} has rate {}; rates must be positive", p.m, p.n, p.k, p.gflops);
    }
    if (!seen.emplace(p.m, p.n, p.k).second) return fmt::format("shape {}x{}x{} is given twice", p.m, p.n, p.k);
    ms.insert(p.m);
    ns.insert(p.n);
    ks.insert(p.k);
  }
  for (const int64_t m : ms) {
    for (const int64_t n : ns) {
      for (const int64_t k : ks) {
        if (!seen.count({m, n, k})) {
          return fmt::format("shape {}x{}x{} on {} thread(s) with {} running is missing: the shapes of one thread "
                             "and running count must form a full grid of their m, n and k values ({} x {} x {} = {} "
                             "shapes; {} given)",
                             m, n, k, points.front().threads, points.front().running, ms.size(), ns.size(), ks.size(),
                             ms.size() * ns.size() * ks.size(), points.size());
        }
      }
    }
  }
  return "";
}

std::vector<GemmRatePoint> grid_of(const std::vector<GemmRatePoint>& points, int threads, int running) {
  std::vector<GemmRatePoint> grid;
  for (const GemmRatePoint& point : points) {
    if (point.threads == threads && point.running == running) grid.push_back(point);
  }
  return grid;
}

}  // namespace

std::string gemm_grid_problem(const std::vector<GemmRatePoint>& points) {
  if (points.empty()) return "no shapes";
  std::set<std::pair<int, int>> grids;  // (threads, running)
  for (const GemmRatePoint& point : points) {
    if (point.threads < 1 || point.running < 1) {
      return fmt::format("shape {}x{}x{} has {} threads and {} running; both must be at least 1", point.m, point.n,
                         point.k, point.threads, point.running);
    }
    grids.emplace(point.threads, point.running);
  }
  for (const auto& [threads, running] : grids) {
    if (std::string problem = one_grid_problem(grid_of(points, threads, running)); !problem.empty()) return problem;
  }
  return "";
}

namespace {

/// The fewest threads of `points`, and the fewest running among those.
std::pair<int, int> alone_grid(const std::vector<GemmRatePoint>& points) {
  SPLITSCOPE_CHECK(!points.empty(), "gemm rates: no shapes");
  const auto first = std::min_element(points.begin(), points.end(), [](const auto& a, const auto& b) {
    return std::pair{a.threads, a.running} < std::pair{b.threads, b.running};
  });
  return {first->threads, first->running};
}

}  // namespace

GemmRateCurve::GemmRateCurve(const std::vector<GemmRatePoint>& points)
    : GemmRateCurve(points, alone_grid(points).first, alone_grid(points).second) {}

GemmRateCurve::GemmRateCurve(const std::vector<GemmRatePoint>& all_points, int threads, int running)
    : threads_(threads), running_(running) {
  const std::string problem = gemm_grid_problem(all_points);
  SPLITSCOPE_CHECK(problem.empty(), "gemm rates: " + problem);
  const std::vector<GemmRatePoint> points = grid_of(all_points, threads, running);
  SPLITSCOPE_CHECK(!points.empty(),
                   fmt::format("gemm rates: no grid on {} thread(s) with {} running", threads, running));
  m_.log2_values = distinct_log2(points, &GemmRatePoint::m);
  n_.log2_values = distinct_log2(points, &GemmRatePoint::n);
  k_.log2_values = distinct_log2(points, &GemmRatePoint::k);
  log2_rates_.assign(m_.log2_values.size() * n_.log2_values.size() * k_.log2_values.size(), 0.0);
  for (const GemmRatePoint& p : points) {
    const size_t at = (index_of(m_.log2_values, p.m) * n_.log2_values.size() + index_of(n_.log2_values, p.n)) *
                          k_.log2_values.size() +
                      index_of(k_.log2_values, p.k);
    log2_rates_[at] = std::log2(p.gflops * 1e9);
  }
}

std::pair<size_t, double> GemmRateCurve::Axis::locate(double log2_value) const {
  if (log2_values.size() == 1 || log2_value <= log2_values.front()) return {0, 0.0};
  if (log2_value >= log2_values.back()) return {log2_values.size() - 2, 1.0};
  const size_t upper =
      static_cast<size_t>(std::upper_bound(log2_values.begin(), log2_values.end(), log2_value) - log2_values.begin());
  const size_t lower = upper - 1;
  return {lower, (log2_value - log2_values[lower]) / (log2_values[upper] - log2_values[lower])};
}

double GemmRateCurve::log2_rate_at(size_t i, size_t j, size_t l) const {
  return log2_rates_[(i * n_.log2_values.size() + j) * k_.log2_values.size() + l];
}

double GemmRateCurve::flops_per_second(int64_t m, int64_t n, int64_t k) const {
  const auto [i, wi] = m_.locate(std::log2(static_cast<double>(std::max<int64_t>(1, m))));
  const auto [j, wj] = n_.locate(std::log2(static_cast<double>(std::max<int64_t>(1, n))));
  const auto [l, wl] = k_.locate(std::log2(static_cast<double>(std::max<int64_t>(1, k))));
  // A one-value axis has no upper neighbour: its weight is 0, and the index stays in range.
  const auto next = [](size_t index, double weight) { return weight > 0 ? index + 1 : index; };
  double log2_rate = 0;
  for (const auto& [a, fa] : {std::pair{i, 1 - wi}, std::pair{next(i, wi), wi}}) {
    for (const auto& [b, fb] : {std::pair{j, 1 - wj}, std::pair{next(j, wj), wj}}) {
      for (const auto& [c, fc] : {std::pair{l, 1 - wl}, std::pair{next(l, wl), wl}}) {
        const double weight = fa * fb * fc;
        if (weight > 0) log2_rate += weight * log2_rate_at(a, b, c);
      }
    }
  }
  return std::exp2(log2_rate);
}

double GemmRateCurve::seconds(int64_t m, int64_t n, int64_t k) const {
  if (m <= 0 || n <= 0 || k <= 0) return 0.0;
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / flops_per_second(m, n, k);
}

}  // namespace splitscope
