#pragma once
/// \file
/// The simulator's error against measurement, as `splitscope validate`
/// reports it: per run the measured and predicted makespans and the relative
/// error; over every run the median and maximum absolute error; per group
/// (one network on one device count) the strategies in measured and in
/// predicted order, whether they are the same, and Kendall's tau-b between
/// the two sets of times.

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace splitscope {

struct ValidationCase {
  std::string network;
  int devices = 0;          ///< of the split strategies (the baseline runs on one)
  std::string strategy;
  double measured_ms = 0;   ///< median of the measured repeats
  double predicted_ms = 0;  ///< the simulator's makespan
  /// The prediction's RunInfo::calibrated_share, on a machine with measured op times.
  std::optional<double> calibrated_share = std::nullopt;
  /// Every measured repeat's makespan, in the order run; with fewer than
  /// kMinRepeatsForInterval of them the case is tied with no other.
  std::vector<double> repeat_ms{};
  /// predicted / measured − 1: +0.1 predicts 10% too slow, −0.1 too fast.
  double error() const { return predicted_ms / measured_ms - 1; }
};

struct ValidationGroup {
  std::string network;
  int devices = 0;
  std::vector<std::string> measured_order;   ///< fastest first; ties by name
  std::vector<std::string> predicted_order;  ///< likewise
  double kendall_tau = 1;                    ///< between measured and predicted times (kendall_tau_b)
  bool same_ranking = true;                  ///< measured_order == predicted_order
  /// Pairs of strategies predicted exactly equal (identical plans, such as
  /// `horizontal` and a one-micro-batch `pipeline`), each pair's names in
  /// name order.
  std::vector<std::pair<std::string, std::string>> predicted_ties;
  /// Pairs of strategies the measurement cannot order: the 95% bootstrap
  /// interval of the ratio of their medians (speedup_interval.hpp, as
  /// compare's verdicts) holds 1. Each pair's names in name order.
  std::vector<std::pair<std::string, std::string>> measured_ties;
  /// No pair of strategies is predicted in the order opposite to the
  /// measured one; a pair predicted exactly equal is no claim either way, so
  /// it is never one (the measured order of identical plans is the machine's
  /// noise). Implied by same_ranking.
  bool ranking_right = true;
  /// ranking_right, with measured ties also making no claim: every pair
  /// predicted the other way round is one the measurement cannot order.
  bool ranking_right_beyond_noise = true;
};

struct ValidationSummary {
  std::vector<ValidationCase> cases;
  std::vector<ValidationGroup> groups;  ///< in the order their first case came
  double median_abs_error = 0;          ///< of |error()|; the mean of the middle two for an even count
  double max_abs_error = 0;
  int within_10_percent = 0;            ///< cases with |error()| <= 0.10
  int within_25_percent = 0;
  int groups_same_ranking = 0;
  int groups_ranking_right = 0;
  int groups_ranking_right_beyond_noise = 0;
};

/// Kendall's tau-b of two equally long series: (C − D) / sqrt((P − Ta)(P − Tb))
/// over the P = n(n−1)/2 pairs, C concordant, D discordant, Ta and Tb the
/// pairs tied in `a` and in `b` (a pair tied in either counts in neither C
/// nor D). 1 when there is no pair to order (n < 2, or every pair tied on
/// both sides); 0 when one side ties every pair and the other does not.
double kendall_tau_b(const std::vector<double>& a, const std::vector<double>& b);

/// The summary of `cases` (each with positive times; InternalError otherwise).
ValidationSummary summarize_validation(std::vector<ValidationCase> cases);

}  // namespace splitscope
