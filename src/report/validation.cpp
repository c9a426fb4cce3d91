// The simulator's error against measurement (validation.hpp).

#include "report/validation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "report/speedup_interval.hpp"
#include "util/check.hpp"
#include "util/median.hpp"

namespace splitscope {
namespace {

int sign(double x) { return (x > 0) - (x < 0); }

/// `names` ordered by `times`, fastest first; equal times by name.
std::vector<std::string> ordered(const std::vector<std::string>& names, const std::vector<double>& times) {
  std::vector<size_t> index(names.size());
  std::iota(index.begin(), index.end(), 0);
  std::sort(index.begin(), index.end(), [&](size_t x, size_t y) {
    return times[x] != times[y] ? times[x] < times[y] : names[x] < names[y];
  });
  std::vector<std::string> out;
  for (size_t i : index) out.push_back(names[i]);
  return out;
}

/// How the pairs of two equally long series compare (kendall_tau_b's terms).
struct PairCounts {
  double pairs = 0;
  double concordant = 0;
  double discordant = 0;
  double tied_a = 0;
  double tied_b = 0;
};

PairCounts count_pairs(const std::vector<double>& a, const std::vector<double>& b) {
  SPLITSCOPE_CHECK(a.size() == b.size(), "Kendall's tau of series of different lengths");
  const size_t n = a.size();
  PairCounts counts;
  counts.pairs = static_cast<double>(n) * static_cast<double>(n > 0 ? n - 1 : 0) / 2;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      const int sa = sign(a[i] - a[j]);
      const int sb = sign(b[i] - b[j]);
      if (sa == 0) counts.tied_a += 1;
      if (sb == 0) counts.tied_b += 1;
      if (sa == 0 || sb == 0) continue;
      (sa == sb ? counts.concordant : counts.discordant) += 1;
    }
  }
  return counts;
}

/// Whether the 95% interval of median(a) / median(b) holds 1 (never, without enough repeats on both sides).
bool measured_tie(const std::vector<double>& a, const std::vector<double>& b) {
  const std::optional<SpeedupInterval> interval = speedup_interval(a, b);
  return interval && interval->low <= 1 && interval->high >= 1;
}

double tau_b(const PairCounts& c) {
  const double denominator = std::sqrt((c.pairs - c.tied_a) * (c.pairs - c.tied_b));
  if (denominator == 0) return (c.pairs - c.tied_a) == (c.pairs - c.tied_b) ? 1.0 : 0.0;
  return (c.concordant - c.discordant) / denominator;
}

}  // namespace

double kendall_tau_b(const std::vector<double>& a, const std::vector<double>& b) {
  return tau_b(count_pairs(a, b));
}

ValidationSummary summarize_validation(std::vector<ValidationCase> cases) {
  ValidationSummary summary;
  std::vector<double> errors;
  for (const ValidationCase& c : cases) {
    SPLITSCOPE_CHECK(c.measured_ms > 0 && c.predicted_ms > 0 && std::isfinite(c.measured_ms) &&
                         std::isfinite(c.predicted_ms),
                     fmt::format("{} {} on {}: times must be positive ({} ms measured, {} ms predicted)", c.network,
                                 c.strategy, c.devices, c.measured_ms, c.predicted_ms));
    const double error = std::abs(c.error());
    errors.push_back(error);
    summary.max_abs_error = std::max(summary.max_abs_error, error);
    summary.within_10_percent += error <= 0.10 ? 1 : 0;
    summary.within_25_percent += error <= 0.25 ? 1 : 0;
  }
  if (!errors.empty()) summary.median_abs_error = median(errors);

  for (size_t first = 0; first < cases.size(); ++first) {
    const ValidationCase& c = cases[first];
    const bool seen = std::any_of(summary.groups.begin(), summary.groups.end(), [&](const ValidationGroup& g) {
      return g.network == c.network && g.devices == c.devices;
    });
    if (seen) continue;
    std::vector<std::string> names;
    std::vector<double> measured;
    std::vector<double> predicted;
    std::vector<const std::vector<double>*> repeats;
    for (size_t k = first; k < cases.size(); ++k) {
      if (cases[k].network != c.network || cases[k].devices != c.devices) continue;
      names.push_back(cases[k].strategy);
      measured.push_back(cases[k].measured_ms);
      predicted.push_back(cases[k].predicted_ms);
      repeats.push_back(&cases[k].repeat_ms);
    }
    ValidationGroup group;
    group.network = c.network;
    group.devices = c.devices;
    group.measured_order = ordered(names, measured);
    group.predicted_order = ordered(names, predicted);
    const PairCounts pairs = count_pairs(measured, predicted);
    group.kendall_tau = tau_b(pairs);
    group.same_ranking = group.measured_order == group.predicted_order;
    // A pair predicted equal claims no order, and one measured equal is
    // right either way: only discordant pairs are wrong.
    group.ranking_right = pairs.discordant == 0;
    group.ranking_right_beyond_noise = true;
    for (size_t i = 0; i < names.size(); ++i) {
      for (size_t j = i + 1; j < names.size(); ++j) {
        if (predicted[i] == predicted[j]) group.predicted_ties.push_back(std::minmax(names[i], names[j]));
        const bool tied = measured_tie(*repeats[i], *repeats[j]);
        if (tied) group.measured_ties.push_back(std::minmax(names[i], names[j]));
        if (!tied && sign(measured[i] - measured[j]) * sign(predicted[i] - predicted[j]) < 0) {
          group.ranking_right_beyond_noise = false;
        }
      }
    }
    summary.groups_same_ranking += group.same_ranking ? 1 : 0;
    summary.groups_ranking_right += group.ranking_right ? 1 : 0;
    summary.groups_ranking_right_beyond_noise += group.ranking_right_beyond_noise ? 1 : 0;
    summary.groups.push_back(std::move(group));
  }
  summary.cases = std::move(cases);
  return summary;
}

}  // namespace splitscope
