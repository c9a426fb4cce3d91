#pragma once
/// \file
/// The fields of one object of a network file (the document, a layer) as the
/// parser and each layer type (ops/layer_def.hpp) read them: the shared
/// input-file reader (util/json_fields.hpp) plus what only network files
/// have: sizes, kernel extents, activations.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "ir/layer.hpp"
#include "ir/model_limits.hpp"
#include "util/json_fields.hpp"

namespace splitscope {

class NetworkFields : public JsonFields {
 public:
  using JsonFields::JsonFields;

  void allow_only(const std::set<std::string>& allowed, const std::string& what) const {
    for (const auto& [key, value] : raw().items()) {
      if (allowed.count(key)) continue;
      std::string names;
      for (const auto& name : allowed) names += (names.empty() ? "" : ", ") + name;
      fail(key, "unknown field for " + what + "; allowed fields are " + names);
    }
  }

  int64_t positive_int(const nlohmann::json& value, const std::string& field) const {
    return checked_integer(value, field, 1, kMaxElements);
  }
  int64_t required_positive(const std::string& field, const std::string& what) const {
    return integer(field, what, 1, kMaxElements);
  }
  int64_t optional_positive(const std::string& field, int64_t fallback) const {
    return optional_integer(field, fallback, 1, kMaxElements);
  }

  /// An int or [h, w]; each part >= minimum.
  Extent2 extent(const std::string& field, Extent2 fallback, int64_t minimum) const {
    if (!has(field)) return fallback;
    const nlohmann::json& value = raw().at(field);
    if (value.is_array()) {
      if (value.size() != 2) fail(field, "must be an integer or [height, width]");
      return {checked_integer(value[0], field, minimum, kMaxElements),
              checked_integer(value[1], field, minimum, kMaxElements)};
    }
    const int64_t both = checked_integer(value, field, minimum, kMaxElements);
    return {both, both};
  }

  Activation activation() const {
    const std::string name = optional_string("activation", "none");
    const auto activation = activation_from_string(name);
    if (!activation) fail("activation", "unknown activation '" + name + "'; use none, relu, tanh or sigmoid");
    return *activation;
  }
};

}  // namespace splitscope
