#pragma once
/// \file
/// Reads the fields of one JSON object of an input file, knowing the object's
/// JSON path, and reports every problem as an InputError
/// `<file>: <json path>: <problem>` (the style of network files).

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "util/json_text.hpp"  // parse_json_text, read_input_file: most readers want both

namespace splitscope {

/// "an integer", "a string", ... for messages.
std::string json_type_name(const nlohmann::json& value);

/// Which numbers a field accepts.
enum class NumberRule {
  kPositive,     ///< > 0
  kNonNegative,  ///< >= 0
  kFraction,     ///< in (0, 1], at least 1e-6
  kFinite,       ///< any finite number
  /// A machine quantity in its file's units (GB/s, TFLOP/s, GiB, µs): in
  /// [1e-6, 1e12] (tests model free links as 1e12 GB/s), so that every time
  /// derived from it stays a sensible finite number.
  kQuantity,
  kQuantityOrZero,  ///< 0, or a kQuantity
};

class JsonFields {
 public:
  /// `object` must outlive the reader; `path` is its JSON path ("" for the document).
  JsonFields(const nlohmann::json& object, std::string path, std::string source);

  [[noreturn]] void fail(std::string_view field, const std::string& problem) const;
  /// The JSON path of a member: "device.peak_tflops", `op_times_us["dense:b8"]`
  /// for a key that is not a plain name, or "input[2]" for an index "[2]" of an array.
  std::string path_of(std::string_view field) const;
  const std::string& path() const { return path_; }
  const std::string& source() const { return source_; }
  const nlohmann::json& raw() const { return object_; }

  /// Fails on the first member not in `allowed`, listing the allowed ones.
  void allow_only(std::initializer_list<std::string_view> allowed, std::string_view what) const;

  bool has(std::string_view field) const;
  /// A member that must be there (InputError "missing required field (what)").
  const nlohmann::json& required(std::string_view field, std::string_view what) const;
  /// A member that must be an object, as a reader of its own.
  JsonFields object(std::string_view field, std::string_view what) const;
  std::string string(std::string_view field, std::string_view what) const;
  std::string optional_string(std::string_view field, const std::string& fallback) const;
  bool optional_bool(std::string_view field, bool fallback) const;
  /// An integer in [minimum, maximum].
  int64_t integer(std::string_view field, std::string_view what, int64_t minimum, int64_t maximum) const;
  /// Checks an integer already read (e.g. an array element) against [minimum, maximum].
  int64_t checked_integer(const nlohmann::json& value, std::string_view field, int64_t minimum,
                          int64_t maximum) const;
  int64_t optional_integer(std::string_view field, int64_t fallback, int64_t minimum,
                           int64_t maximum) const;
  /// A finite number obeying `rule`.
  double number(std::string_view field, std::string_view what, NumberRule rule) const;
  double optional_number(std::string_view field, double fallback, NumberRule rule) const;
  /// Checks a number already read (e.g. a map entry's value) against `rule`.
  double checked_number(const nlohmann::json& value, std::string_view field, NumberRule rule) const;

 private:
  const nlohmann::json& member(std::string_view field, std::string_view what) const;

  const nlohmann::json& object_;
  std::string path_;
  std::string source_;
};

}  // namespace splitscope
