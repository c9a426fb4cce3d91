#pragma once
/// \file
/// Reads and validates network files (docs/network-format.md). Every problem is an
/// InputError naming the file and the JSON path of the offending field, e.g.
/// `nets/x.json: layers[3].kernel: kernel 13x13 is larger than the padded input 12x12`.

#include <string>
#include <string_view>

#include "ir/model.hpp"

namespace splitscope {

/// Parses a network from JSON text; `source` names it in messages.
Model parse_model_text(std::string_view text, const std::string& source);

/// Reads and parses a network file.
Model load_model_file(const std::string& path);

}  // namespace splitscope
