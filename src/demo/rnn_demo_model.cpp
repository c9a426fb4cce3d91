#include "demo/rnn_demo_model.hpp"

#include <fmt/format.h>

#include <charconv>
#include <nlohmann/json.hpp>
#include <system_error>

#include "ir/model_parser.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

void require_positive(const std::string& option, int64_t value) {
  if (value <= 0) throw InputError(option, "", "must be positive, got " + std::to_string(value));
}

}  // namespace

Model rnn_demo_model(const RnnDemoShape& shape) {
  if (shape.cell != "lstm" && shape.cell != "gru") {
    throw InputError("--cell", "", "unknown cell '" + shape.cell + "'; use lstm or gru");
  }
  require_positive("--layers", shape.layers);
  require_positive("--hidden", shape.hidden);
  require_positive("--steps", shape.steps);
  require_positive("--batch", shape.batch);
  const std::string name = shape.cell + "-demo-" + std::to_string(shape.layers) + "x" + std::to_string(shape.hidden);
  const nlohmann::json doc = {
      {"name", name},
      {"batch", shape.batch},
      {"input", {shape.steps, shape.hidden}},
      {"layers",
       {{{"type", shape.cell}, {"hidden", shape.hidden}, {"layers", shape.layers},
         {"return_sequences", false}, {"name", shape.cell}}}}};
  try {
    return parse_model_text(doc.dump(), "demo rnn");
  } catch (const InputError& error) {
    // The user gave options, not a file: name them, with the part of the network that broke.
    throw InputError("--layers/--hidden/--steps/--batch", "",
                     fmt::format("{} layers × {} hidden over {} steps, batch {}: {}{}{}", shape.layers, shape.hidden,
                                 shape.steps, shape.batch, error.field(), error.field().empty() ? "" : ": ",
                                 error.problem()));
  }
}

RnnSweep parse_rnn_sweep(const std::string& text) {
  const auto equals = text.find('=');
  if (equals == std::string::npos) {
    throw InputError("--sweep", "", "expected NAME=V1,V2,... (e.g. hidden=256,512,1024), got '" + text + "'");
  }
  RnnSweep sweep;
  sweep.name = text.substr(0, equals);
  if (sweep.name != "hidden" && sweep.name != "layers" && sweep.name != "steps" && sweep.name != "batch") {
    throw InputError("--sweep", "", "can sweep hidden, layers, steps or batch, not '" + sweep.name + "'");
  }
  size_t position = equals + 1;
  while (position <= text.size()) {
    const auto comma = text.find(',', position);
    const std::string item = text.substr(position, comma == std::string::npos ? std::string::npos : comma - position);
    // Digits only: stoll would take " 256" and "+256", which a script that
    // made them probably did not mean.
    int64_t value = 0;
    const bool digits = !item.empty() && item.find_first_not_of("0123456789") == std::string::npos;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (!digits || error != std::errc() || end != item.data() + item.size() || value <= 0) {
      throw InputError("--sweep", "", "'" + item + "' is not a positive integer (digits only, e.g. " + sweep.name +
                                          "=256,512)");
    }
    sweep.values.push_back(value);
    if (comma == std::string::npos) break;
    position = comma + 1;
  }
  return sweep;
}

RnnDemoShape with_swept(RnnDemoShape shape, const std::string& name, int64_t value) {
  if (name == "hidden") shape.hidden = value;
  if (name == "layers") shape.layers = value;
  if (name == "steps") shape.steps = value;
  if (name == "batch") shape.batch = value;
  return shape;
}

}  // namespace splitscope
