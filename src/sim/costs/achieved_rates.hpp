#pragma once
/// \file
/// Achieved rates learned from the GPUs we measured (docs/cost-model.md,
/// "Achieved rates learned from measurements"). The datasheet rules price an
/// op from the device's datasheet facts and the op's shape (tile and wave
/// quantization over the SMs, cuDNN's algorithms, the memory roofline); what
/// the libraries reach of that differs by op family, and by how large the
/// op is. A rules file (models/rules/NAME.json, written by
/// scripts/fit-achieved-rates from calibrations) gives, per family:
///
///     body     = the datasheet rules' time with no launch overhead
///     fraction = exp(log_fraction + slope · ln(clamp(body, body_range) / 10 µs))
///     seconds  = fixed + body / fraction
///
/// `fraction` is the achieved share of what the datasheet rule assumes (the
/// peak after quantization, or the memory rate), as a function of the op's
/// size; `fixed` is what each call of the family costs beyond its work (its
/// launches and the libraries' host work, measured on an idle stream). Since
/// `body` comes from the device's facts (SM count, peaks, memory bandwidth),
/// the same rule prices a GPU never measured.
///
/// A family is what the library runs for the op: products by shape class
/// and math (`product.fma.skinny`: 16 rows or fewer, `product.fma.wide`),
/// convolutions by pass and kernel class (`conv_forward.fma.3x3s1`, ...),
/// recurrent cells (`lstm_cell`, `gru_cell`), pooling (`pool.max`,
/// `pool.avg`), joins (`join`: add, concat, stack, slices) and the other
/// streaming kinds by their bytes (`elementwise`). A pass the rules file
/// has not measured falls back to the family it names second (a
/// convolution's data gradient to its forward), and a family with no rule
/// at all keeps the datasheet rules.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.hpp"
#include "ir/slice.hpp"

namespace splitscope {

/// The value of a rules file's "schema" field.
inline constexpr std::string_view kAchievedRatesSchema = "splitscope.achieved-rates/1";
/// The rules a machine file's GPU (a device with `sm_count`) is priced by when
/// it names none; `"achieved_rates": "none"` keeps the datasheet rules alone.
inline constexpr std::string_view kDefaultAchievedRates = "achieved-rates";
inline constexpr std::string_view kNoAchievedRates = "none";
/// The body time the slope is measured from: ln(body / this).
inline constexpr double kAchievedRateReferenceSeconds = 10e-6;

/// One family's rule.
struct AchievedRateRule {
  double log_fraction = 0;  ///< ln(fraction) at a body of 10 µs
  double slope = 0;         ///< d ln(fraction) / d ln(body)
  double fixed_seconds = 0;
  /// The body times the rule was fitted over; outside them the fraction is
  /// held at the nearest end (no extrapolation of the slope).
  double min_body_seconds = 0;
  double max_body_seconds = 0;
  /// The median |predicted / measured - 1| of the rule on the measurements
  /// it was fitted on (the file's `median_error`): how far off an op of this
  /// family typically is, which the simulator reports as its own error.
  std::optional<double> median_error;

  /// The achieved fraction at `body_seconds`.
  double fraction(double body_seconds) const;
  /// fixed + body / fraction; 0 for an op with no work (body 0).
  double seconds(double body_seconds) const;
};

/// A rules file: rules by family name.
class AchievedRates {
 public:
  AchievedRates(std::string source, std::map<std::string, AchievedRateRule> rules)
      : source_(std::move(source)), rules_(std::move(rules)) {}

  /// The rule of the first of `families` that has one; null when none does.
  const AchievedRateRule* rule_for(const std::vector<std::string>& families) const;
  const std::map<std::string, AchievedRateRule>& rules() const { return rules_; }
  /// The file the rules came from.
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::map<std::string, AchievedRateRule> rules_;
};

/// Parses a rules file's text; `source` names it in messages (InputError).
AchievedRates parse_achieved_rates(std::string_view text, const std::string& source);
/// A rules file by zoo name (models/rules/NAME.json) or path.
std::shared_ptr<const AchievedRates> load_achieved_rates(const std::string& name_or_path);

/// The families `slice` of `node` belongs to, most specific first (a pass
/// not measured falls back to the next); empty for kinds no family covers.
/// `tensor_math`: the products run on tensor cores (the machine's
/// matrix_math is not fp32).
std::vector<std::string> achieved_rate_families(const OpNode& node, const Slice& slice, bool tensor_math);
/// What of `slice` of `node`'s families its kind does not decide: a product's
/// shape class (0 skinny, 1 wide), a convolution's kernel class (0 1x1,
/// 1 3x3 stride 1, 2 other); 0 for every other kind. Ops of one kind and
/// variant have the same families, so a pass over a plan can look them up once.
int achieved_rate_variant(const OpNode& node, const Slice& slice);
inline constexpr int kAchievedRateVariants = 3;
/// The families of a matrix product of `rows` rows (skinny or wide), tensor-core first where `tensor_math`.
std::vector<std::string> product_families(int64_t rows, bool tensor_math);

}  // namespace splitscope
