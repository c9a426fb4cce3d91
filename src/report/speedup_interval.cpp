#include "report/speedup_interval.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "util/median.hpp"

namespace splitscope {
namespace {

constexpr int kResamples = 2000;
constexpr uint64_t kSeed = 0x5eed5eed;  // fixed: the same repeats give the same interval


}  // namespace

std::optional<SpeedupInterval> speedup_interval(const std::vector<double>& baseline_ms,
                                                const std::vector<double>& run_ms) {
  if (baseline_ms.size() < kMinRepeatsForInterval || run_ms.size() < kMinRepeatsForInterval) return std::nullopt;
  std::mt19937_64 random(kSeed);
  std::uniform_int_distribution<size_t> pick_baseline(0, baseline_ms.size() - 1);
  std::uniform_int_distribution<size_t> pick_run(0, run_ms.size() - 1);
  std::vector<double> a(baseline_ms.size());
  std::vector<double> b(run_ms.size());
  std::vector<double> ratios;
  ratios.reserve(kResamples);
  for (int r = 0; r < kResamples; ++r) {
    for (double& x : a) x = baseline_ms[pick_baseline(random)];
    for (double& x : b) x = run_ms[pick_run(random)];
    const double run = median(b);
    if (run > 0) ratios.push_back(median(a) / run);
  }
  if (ratios.empty()) return std::nullopt;
  std::sort(ratios.begin(), ratios.end());
  // Nearest-rank percentiles.
  const auto at = [&](double p) {
    const auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(ratios.size())));
    return ratios[std::clamp<size_t>(rank, 1, ratios.size()) - 1];
  };
  return SpeedupInterval{at(0.025), at(0.975)};
}

}  // namespace splitscope
