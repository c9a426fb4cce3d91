#include "util/json_fields.hpp"

#include <fmt/format.h>

#include <cmath>

#include "util/errors.hpp"

namespace splitscope {

using nlohmann::json;

std::string json_type_name(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_float: return "a fractional number";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    default: return "something else";
  }
}

JsonFields::JsonFields(const json& object, std::string path, std::string source)
    : object_(object), path_(std::move(path)), source_(std::move(source)) {}

void JsonFields::fail(std::string_view field, const std::string& problem) const {
  throw InputError(source_, field.empty() ? path_ : path_of(field), problem);
}

std::string JsonFields::path_of(std::string_view field) const {
  if (!field.empty() && field.front() == '[') return path_ + std::string(field);  // an array index
  // "inputs[0]": a field, then an index into it.
  if (const size_t bracket = field.find('['); bracket != std::string_view::npos && bracket > 0 && field.back() == ']') {
    const std::string_view name = field.substr(0, bracket);
    if (name.find_first_of("[]\"") == std::string_view::npos) return path_of(name) + std::string(field.substr(bracket));
  }
  const bool plain = !field.empty() && field.find_first_not_of(
                                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                           "0123456789_") == std::string_view::npos;
  if (!plain) return fmt::format("{}[\"{}\"]", path_, field);
  return path_.empty() ? std::string(field) : fmt::format("{}.{}", path_, field);
}

void JsonFields::allow_only(std::initializer_list<std::string_view> allowed,
                            std::string_view what) const {
  for (const auto& [key, value] : object_.items()) {
    bool known = false;
    for (std::string_view name : allowed) known = known || name == key;
    if (known) continue;
    std::string names;
    for (std::string_view name : allowed) names.append(names.empty() ? "" : ", ").append(name);
    fail(key, "unknown field for " + std::string(what) + "; allowed fields are " + names);
  }
}

bool JsonFields::has(std::string_view field) const { return object_.contains(field); }

const json& JsonFields::required(std::string_view field, std::string_view what) const {
  return member(field, what);
}

const json& JsonFields::member(std::string_view field, std::string_view what) const {
  if (!has(field)) fail(field, fmt::format("missing required field ({})", what));
  return object_.at(std::string(field));
}

JsonFields JsonFields::object(std::string_view field, std::string_view what) const {
  const json& value = member(field, what);
  if (!value.is_object()) {
    fail(field, fmt::format("must be an object ({}), got {}", what, json_type_name(value)));
  }
  return JsonFields(value, path_of(field), source_);
}

std::string JsonFields::string(std::string_view field, std::string_view what) const {
  const json& value = member(field, what);
  if (!value.is_string()) fail(field, "must be a string, got " + json_type_name(value));
  if (value.get_ref<const std::string&>().empty()) fail(field, "must not be empty");
  return value.get<std::string>();
}

std::string JsonFields::optional_string(std::string_view field, const std::string& fallback) const {
  if (!has(field)) return fallback;
  const json& value = object_.at(std::string(field));
  if (!value.is_string()) fail(field, "must be a string, got " + json_type_name(value));
  return value.get<std::string>();
}

bool JsonFields::optional_bool(std::string_view field, bool fallback) const {
  if (!has(field)) return fallback;
  const json& value = object_.at(std::string(field));
  if (!value.is_boolean()) fail(field, "must be true or false, got " + json_type_name(value));
  return value.get<bool>();
}

int64_t JsonFields::integer(std::string_view field, std::string_view what, int64_t minimum,
                            int64_t maximum) const {
  return checked_integer(member(field, what), field, minimum, maximum);
}

int64_t JsonFields::checked_integer(const json& value, std::string_view field, int64_t minimum,
                                    int64_t maximum) const {
  if (value.is_number_float() && std::isfinite(value.get<double>()) && value.get<double>() == std::floor(value.get<double>())) {
    // 1e12 is written as a float but means a whole number: say what is wrong with it.
    if (value.get<double>() > static_cast<double>(maximum) && minimum <= 1) {
      fail(field, fmt::format("is too large ({}; at most {})", value.dump(), maximum));
    }
    fail(field, fmt::format("must be written as an integer (e.g. {:.0f}), got {}", value.get<double>(), value.dump()));
  }
  if (!value.is_number_integer()) fail(field, "must be an integer, got " + json_type_name(value));
  const int64_t number = value.is_number_unsigned() && value.get<uint64_t>() > INT64_MAX
                             ? INT64_MAX
                             : value.get<int64_t>();
  // The common bounds read best in words.
  if (number < minimum && minimum == 1) fail(field, fmt::format("must be positive, got {}", number));
  if (number < minimum && minimum == 0) fail(field, fmt::format("must be zero or positive, got {}", number));
  if (number > maximum && minimum <= 1) fail(field, fmt::format("is too large ({}; at most {})", value.dump(), maximum));
  if (number < minimum || number > maximum) {
    fail(field, fmt::format("must be from {} to {}, got {}", minimum, maximum, value.dump()));
  }
  return number;
}

int64_t JsonFields::optional_integer(std::string_view field, int64_t fallback, int64_t minimum,
                                     int64_t maximum) const {
  return has(field) ? integer(field, "", minimum, maximum) : fallback;
}

double JsonFields::checked_number(const json& value, std::string_view field, NumberRule rule) const {
  if (!value.is_number()) fail(field, "must be a number, got " + json_type_name(value));
  const double number = value.get<double>();
  if (!std::isfinite(number)) fail(field, "must be a finite number");
  switch (rule) {
    case NumberRule::kPositive:
      if (number <= 0) fail(field, fmt::format("must be positive, got {}", value.dump()));
      break;
    case NumberRule::kNonNegative:
      if (number < 0) fail(field, fmt::format("must be zero or positive, got {}", value.dump()));
      break;
    case NumberRule::kFraction:
      if (number < 1e-6 || number > 1) {
        fail(field, fmt::format("must be a fraction in (0, 1] (1 = the roofline), at least 1e-6, got {}",
                                value.dump()));
      }
      break;
    case NumberRule::kFinite:
      break;
    case NumberRule::kQuantity:
    case NumberRule::kQuantityOrZero:
      if (rule == NumberRule::kQuantityOrZero && number == 0) break;
      if (rule == NumberRule::kQuantityOrZero && number < 0) {
        fail(field, fmt::format("must be zero or positive, got {}", value.dump()));
      }
      if (number <= 0) fail(field, fmt::format("must be positive, got {}", value.dump()));
      if (number < 1e-6 || number > 1e12) {
        fail(field, fmt::format("must be between 1e-6 and 1e12 in this field's units, got {}", value.dump()));
      }
      break;
  }
  return number;
}

double JsonFields::number(std::string_view field, std::string_view what, NumberRule rule) const {
  return checked_number(member(field, what), field, rule);
}

double JsonFields::optional_number(std::string_view field, double fallback, NumberRule rule) const {
  return has(field) ? checked_number(object_.at(std::string(field)), field, rule) : fallback;
}

}  // namespace splitscope
