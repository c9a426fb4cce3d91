#include "sim/costs/achieved_rates.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ir/ops/op_def.hpp"
#include "ir/zoo.hpp"
#include "util/errors.hpp"
#include "util/json_fields.hpp"

namespace splitscope {
namespace {

/// Rows at or below which a product is a few vectors against a weight
/// matrix (cuBLAS's skinny kernels, bound by streaming the weights) rather
/// than a tiled product.
constexpr int64_t kSkinnyRows = 16;

/// A convolution's kernel class: what selects among cuDNN's algorithms
/// (Winograd needs 3×3 stride 1; 1×1 is a plain product).
std::string conv_class(const OpNode& node) {
  const OpAttrs& a = node.attrs;
  if (a.kernel.h == 1 && a.kernel.w == 1) return "1x1";
  if (a.kernel.h == 3 && a.kernel.w == 3 && a.stride.h == 1 && a.stride.w == 1) return "3x3s1";
  return "other";
}

AchievedRateRule parse_rule(const JsonFields& entry) {
  entry.allow_only({"log_fraction", "slope", "fixed_us", "body_us_range", "n", "median_error", "max_error",
                    "sources", "comment"},
                   "an achieved-rate rule");
  AchievedRateRule rule;
  rule.log_fraction = entry.number("log_fraction", "ln(achieved fraction) at a body of 10 us", NumberRule::kFinite);
  rule.slope = entry.number("slope", "d ln(fraction) / d ln(body)", NumberRule::kFinite);
  rule.fixed_seconds = entry.number("fixed_us", "what a call costs beyond its work, in us", NumberRule::kNonNegative) *
                       1e-6;
  const nlohmann::json& range = entry.required("body_us_range", "the body times fitted over, [min, max] in us");
  if (!range.is_array() || range.size() != 2) entry.fail("body_us_range", "must be [min, max] in us");
  rule.min_body_seconds = entry.checked_number(range[0], "body_us_range[0]", NumberRule::kPositive) * 1e-6;
  rule.max_body_seconds = entry.checked_number(range[1], "body_us_range[1]", NumberRule::kPositive) * 1e-6;
  if (rule.min_body_seconds > rule.max_body_seconds) entry.fail("body_us_range", "min is above max");
  if (entry.raw().contains("median_error")) {
    rule.median_error = entry.number("median_error", "the rule's median |predicted / measured - 1| on its measurements",
                                     NumberRule::kNonNegative);
  }
  return rule;
}

}  // namespace

double AchievedRateRule::fraction(double body_seconds) const {
  const double body = std::clamp(body_seconds, min_body_seconds, max_body_seconds);
  return std::exp(log_fraction + slope * std::log(body / kAchievedRateReferenceSeconds));
}

double AchievedRateRule::seconds(double body_seconds) const {
  if (body_seconds <= 0) return 0.0;
  return fixed_seconds + body_seconds / fraction(body_seconds);
}

const AchievedRateRule* AchievedRates::rule_for(const std::vector<std::string>& families) const {
  for (const std::string& family : families) {
    if (const auto it = rules_.find(family); it != rules_.end()) return &it->second;
  }
  return nullptr;
}

AchievedRates parse_achieved_rates(std::string_view text, const std::string& source) {
  const nlohmann::json doc = parse_json_text(text, source);
  if (!doc.is_object()) throw InputError(source, "", "must be a JSON object (an achieved-rates rules file)");
  const JsonFields top(doc, "", source);
  top.allow_only({"schema", "comment", "reference_body_us", "fitted_on", "families"}, "an achieved-rates rules file");
  const std::string schema = top.string("schema", "the rules file's schema");
  if (schema != kAchievedRatesSchema) {
    top.fail("schema", fmt::format("'{}' is not a rules file this build reads; expected {}", schema,
                                   kAchievedRatesSchema));
  }
  const double reference = top.optional_number("reference_body_us", 10, NumberRule::kPositive);
  if (reference != kAchievedRateReferenceSeconds * 1e6) {
    top.fail("reference_body_us", fmt::format("must be {} (the slope's reference body)",
                                              kAchievedRateReferenceSeconds * 1e6));
  }
  const JsonFields families = top.object("families", "a rule per op family");
  std::map<std::string, AchievedRateRule> rules;
  for (const auto& [family, value] : families.raw().items()) {
    if (!value.is_object()) families.fail(family, "must be an object (one family's rule)");
    rules.emplace(family, parse_rule(JsonFields(value, families.path_of(family), source)));
  }
  return AchievedRates(source, std::move(rules));
}

std::shared_ptr<const AchievedRates> load_achieved_rates(const std::string& name_or_path) {
  const std::string path = resolve_zoo_file(ZooShelf::kRules, name_or_path);
  return std::make_shared<const AchievedRates>(parse_achieved_rates(read_input_file(path), path));
}

std::vector<std::string> achieved_rate_families(const OpNode& node, const Slice& slice, bool tensor_math) {
  const OpDef& def = op_def(node.kind);
  // Every table we measured is fp32: tensor-core products borrow the fp32 kernels' achieved share of their
  // (tensor-core) datasheet time until a measured rule of their own says otherwise.
  const std::vector<std::string> maths = tensor_math ? std::vector<std::string>{"tensor", "fma"}
                                                     : std::vector<std::string>{"fma"};
  const auto each_math = [&maths](std::vector<std::string> patterns) {
    std::vector<std::string> families;
    for (const std::string& pattern : patterns) {
      for (const std::string& math : maths) families.push_back(fmt::format(fmt::runtime(pattern), math));
    }
    return families;
  };
  if (def.conv_pass != ConvPass::kNone) {
    std::vector<std::string> patterns;
    for (std::string_view family : def.rate_families) patterns.push_back(fmt::format("{}.{{}}.{}", family, conv_class(node)));
    return each_math(patterns);
  }
  if (!def.rate_families.empty()) return {def.rate_families.begin(), def.rate_families.end()};
  if (def.cell) return {std::string(def.name)};
  if (def.cost_class == CostClass::kMatrix) {
    return product_families(def.gemm != nullptr ? def.gemm(node, slice).m : slice.batch.size(), tensor_math);
  }
  return {"elementwise"};
}

int achieved_rate_variant(const OpNode& node, const Slice& slice) {
  const OpDef& def = op_def(node.kind);
  if (def.conv_pass != ConvPass::kNone) {
    const std::string kernel = conv_class(node);
    return kernel == "1x1" ? 0 : kernel == "3x3s1" ? 1 : 2;
  }
  if (def.cell || def.cost_class != CostClass::kMatrix) return 0;
  return (def.gemm != nullptr ? def.gemm(node, slice).m : slice.batch.size()) <= kSkinnyRows ? 0 : 1;
}

std::vector<std::string> product_families(int64_t rows, bool tensor_math) {
  const std::string_view shape = rows <= kSkinnyRows ? "skinny" : "wide";
  std::vector<std::string> families;
  if (tensor_math) families.push_back(fmt::format("product.tensor.{}", shape));
  families.push_back(fmt::format("product.fma.{}", shape));
  return families;
}

}  // namespace splitscope
