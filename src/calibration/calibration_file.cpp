#include "calibration/calibration_file.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>

#include "util/json_fields.hpp"
#include "util/errors.hpp"

namespace splitscope::calibration {
namespace {

using nlohmann::json;

constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();

/// Calls `read` on every element of the array `field` of `object`, each as a
/// reader of its own with the path `field[i]`.
void each_element(const JsonFields& object, std::string_view field, std::string_view what,
                  const std::function<void(const JsonFields&)>& read) {
  if (!object.has(field)) object.fail(field, fmt::format("missing required field ({})", what));
  const json& array = object.raw().at(std::string(field));
  if (!array.is_array()) {
    object.fail(field, fmt::format("must be an array ({}), got {}", what, json_type_name(array)));
  }
  const std::string path = object.path_of(field);
  for (size_t i = 0; i < array.size(); ++i) {
    const std::string element_path = fmt::format("{}[{}]", path, i);
    if (!array[i].is_object()) {
      throw InputError(object.source(), element_path, "must be an object, got " + json_type_name(array[i]));
    }
    read(JsonFields(array[i], element_path, object.source()));
  }
}

GemmRate parse_gemm(const JsonFields& entry) {
  GemmRate rate;
  rate.m = entry.integer("m", "rows of the product", 1, kMaxInt64);
  rate.n = entry.integer("n", "columns of the product", 1, kMaxInt64);
  rate.k = entry.integer("k", "the inner dimension", 1, kMaxInt64);
  rate.math = entry.string("math", "fp32, tf32 or bf16");
  rate.seconds = entry.number("seconds", "median time of one product", NumberRule::kNonNegative);
  rate.flops_per_second = entry.number("flops_per_second", "2·m·n·k / seconds", NumberRule::kNonNegative);
  rate.threads = static_cast<int>(entry.optional_integer("threads", 1, 1, 1 << 20));
  rate.running = static_cast<int>(entry.optional_integer("running", 1, 1, 1 << 20));
  return rate;
}

CopySeries parse_copy_series(const JsonFields& entry) {
  CopySeries series;
  series.kind = entry.string("kind", "device_to_device, host_to_device, device_to_host, host_staged or peer");
  series.src_device = static_cast<int>(entry.optional_integer("src_device", 0, 0, 65535));
  series.dst_device = static_cast<int>(entry.optional_integer("dst_device", 0, 0, 65535));
  series.peer_access = entry.optional_bool("peer_access", false);
  series.latency_seconds = entry.number("latency_seconds", "the fitted latency", NumberRule::kNonNegative);
  series.bandwidth_bytes_per_second =
      entry.number("bandwidth_bytes_per_second", "the fitted bandwidth", NumberRule::kNonNegative);
  if (entry.has("points")) {
    each_element(entry, "points", "the copy sizes timed", [&](const JsonFields& point) {
      CopyPoint copy;
      copy.bytes = point.integer("bytes", "bytes copied", 1, kMaxInt64);
      copy.seconds = point.number("seconds", "median time", NumberRule::kNonNegative);
      copy.bytes_per_second = point.number("bytes_per_second", "bytes / seconds", NumberRule::kNonNegative);
      series.points.push_back(copy);
    });
  }
  return series;
}

OpTime parse_op_time(const JsonFields& entry) {
  OpTime time;
  time.signature = entry.string("signature", "op_signature() of the slice timed");
  time.example = entry.optional_string("example", "");
  time.flops = entry.integer("flops", "FLOPs of the slice", 0, kMaxInt64);
  time.bytes = entry.integer("bytes", "bytes read + written", 0, kMaxInt64);
  time.seconds = entry.number("seconds", "median time", NumberRule::kNonNegative);
  time.min_seconds = entry.optional_number("min_seconds", 0.0, NumberRule::kNonNegative);
  time.max_seconds = entry.optional_number("max_seconds", 0.0, NumberRule::kNonNegative);
  time.shares = static_cast<int>(entry.optional_integer("shares", 1, 1, 1 << 20));
  time.running = static_cast<int>(entry.optional_integer("running", 0, 0, 1 << 20));
  return time;
}

/// The optional array of strings `field` of `top`.
std::vector<std::string> parse_strings(const JsonFields& top, const std::string& field) {
  std::vector<std::string> strings;
  if (!top.has(field)) return strings;
  const json& array = top.raw().at(field);
  if (!array.is_array()) top.fail(field, "must be an array of strings, got " + json_type_name(array));
  for (size_t i = 0; i < array.size(); ++i) {
    if (!array[i].is_string()) {
      throw InputError(top.source(), fmt::format("{}[{}]", field, i), "must be a string, got " + json_type_name(array[i]));
    }
    strings.push_back(array[i].get<std::string>());
  }
  return strings;
}

/// `kernel_passes`: {"fill_seconds_per_value", "activation_seconds_per_value": {name: s}, "im2col": [{"threads",
/// "seconds_per_value", "seconds_per_call"}]}.
KernelPassTimes parse_kernel_passes(const JsonFields& top) {
  const JsonFields passes = top.object("kernel_passes", "the cpu kernels' passes other than products");
  passes.allow_only({"fill_seconds_per_value", "activation_seconds_per_value", "im2col", "pool_seconds_per_window_value"},
                    "the kernel passes");
  KernelPassTimes times;
  times.fill_seconds_per_value =
      passes.number("fill_seconds_per_value", "a bias copied into outputs, per value", NumberRule::kNonNegative);
  const JsonFields activations =
      passes.object("activation_seconds_per_value", "each activation in place, per value, by name");
  for (const auto& [name, value] : activations.raw().items()) {
    times.activation_seconds_per_value[name] = activations.checked_number(value, name, NumberRule::kNonNegative);
  }
  each_element(passes, "im2col", "im2col on each thread count", [&](const JsonFields& entry) {
    entry.allow_only({"threads", "seconds_per_value", "seconds_per_call"}, "an im2col time");
    Im2colTime time;
    time.threads = static_cast<int>(entry.integer("threads", "the pool's threads", 1, 1 << 16));
    time.seconds_per_value =
        entry.number("seconds_per_value", "per value of the patch matrix", NumberRule::kNonNegative);
    time.seconds_per_call = entry.number("seconds_per_call", "each call's fixed part", NumberRule::kNonNegative);
    times.im2col.push_back(time);
  });
  if (passes.has("pool_seconds_per_window_value")) {
    const JsonFields pools = passes.object("pool_seconds_per_window_value", "each pooling kind per window element");
    for (const auto& [kind, value] : pools.raw().items()) {
      times.pool_seconds_per_window_value[kind] = pools.checked_number(value, kind, NumberRule::kNonNegative);
    }
  }
  return times;
}

/// Measurements past this range (seconds, rates, bytes per second) are no
/// measurement: derived as machine fields (ns, µs, GB/s, their inverses), they
/// would overflow to infinity or vanish to zero, and the machine file would
/// then be blamed for a number the raw file gave.
constexpr double kLargestMeasurement = 1e30;
constexpr double kSmallestMeasurement = 1e-30;

/// The JSON path of `key` under `path`, as JsonFields::path_of spells it.
std::string member_path(const std::string& path, const std::string& key) {
  const bool plain = !key.empty() && key.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                                           "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == std::string::npos;
  if (!plain) return fmt::format("{}[\"{}\"]", path, key);
  return path.empty() ? key : path + "." + key;
}

/// Fails on the first fractional number of the document outside
/// [kSmallestMeasurement, kLargestMeasurement] (zero is allowed), naming its
/// JSON path in the raw file. Integers are checked by their own ranges.
void check_measurement_ranges(const json& value, const std::string& path, const std::string& source) {
  if (value.is_object()) {
    for (const auto& [key, member] : value.items()) check_measurement_ranges(member, member_path(path, key), source);
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) check_measurement_ranges(value[i], fmt::format("{}[{}]", path, i), source);
  } else if (value.is_number_float()) {
    const double magnitude = std::abs(value.get<double>());
    if (magnitude != 0 && (magnitude > kLargestMeasurement || magnitude < kSmallestMeasurement)) {
      throw InputError(source, path,
                       fmt::format("{} is past the range of a measurement ({:g} to {:g}, or 0): the machine "
                                   "files derived from it would not be finite; measure again, or fix the value",
                                   value.dump(), kSmallestMeasurement, kLargestMeasurement));
    }
  }
}

CalibrationResult parse_document(const json& doc, const std::string& source) {
  if (!doc.is_object()) {
    throw InputError(source, "", "a calibration file is a JSON object, got " + json_type_name(doc));
  }
  const JsonFields top(doc, "", source);
  const std::string schema = top.string("schema", "splitscope.calibration/1");
  if (schema != kCalibrationSchema) {
    top.fail("schema",
             fmt::format("'{}' is not a calibration this build reads; expected {}{}", schema, kCalibrationSchema,
                         schema.rfind("splitscope.machine/", 0) == 0
                             ? " (this is a machine file: use it with --backend sim --machine)"
                             : ""));
  }
  CalibrationResult result;
  result.schema = schema;
  result.date = top.optional_string("date", "");
  result.host = top.optional_string("host", "");

  const JsonFields device = top.object("device", "the GPU measured");
  result.device = static_cast<int>(device.optional_integer("index", 0, 0, 65535));
  result.device_name = device.string("name", "the GPU's model name");
  result.sm_count = static_cast<int>(device.optional_integer("sm_count", 0, 0, 1 << 20));
  result.memory_bytes = device.integer("memory_bytes", "the GPU's memory in bytes", 1, kMaxInt64);
  result.compute_capability = device.optional_string("compute_capability", "");
  result.partitions = static_cast<int>(device.optional_integer("partitions", 1, 1, 1 << 20));

  if (top.has("software")) {
    const JsonFields software = top.object("software", "driver and library versions");
    result.driver = software.optional_string("driver", "");
    result.runtime = software.optional_string("runtime", "");
    result.cublas = software.optional_string("cublas", "");
    result.cudnn = software.optional_string("cudnn", "");
  }
  result.dtype = top.string("dtype", "the math of the op times: fp32, tf32 or bf16");
  result.repeats = static_cast<int>(top.optional_integer("repeats", 0, 0, 1 << 30));

  each_element(top, "gemm", "matrix-product rates",
               [&](const JsonFields& entry) { result.gemm.push_back(parse_gemm(entry)); });
  if (top.has("conv")) {
    each_element(top, "conv", "convolution rates", [&](const JsonFields& entry) {
      ConvRate rate;
      rate.signature = entry.string("signature", "op_signature() of the convolution");
      rate.seconds = entry.number("seconds", "median time", NumberRule::kNonNegative);
      rate.flops_per_second = entry.number("flops_per_second", "FLOPs / seconds", NumberRule::kNonNegative);
      result.conv.push_back(rate);
    });
  }
  each_element(top, "copies", "copy series",
               [&](const JsonFields& entry) { result.copies.push_back(parse_copy_series(entry)); });
  if (top.has("launch")) {
    const JsonFields launch = top.object("launch", "kernel launch overhead");
    result.launch.kernels = static_cast<int>(launch.optional_integer("kernels", 0, 0, 1 << 30));
    result.launch.host_seconds_per_launch =
        launch.optional_number("host_seconds_per_launch", 0.0, NumberRule::kNonNegative);
    result.launch.device_seconds_per_kernel =
        launch.optional_number("device_seconds_per_kernel", 0.0, NumberRule::kNonNegative);
  }
  if (top.has("host_issue")) {
    const JsonFields issue = top.object("host_issue", "the host's cost of issuing one device step");
    result.host_issue.steps = static_cast<int>(issue.optional_integer("steps", 0, 0, 1 << 30));
    result.host_issue.seconds_per_step = issue.optional_number("seconds_per_step", 0.0, NumberRule::kNonNegative);
  }
  if (top.has("lane_handoff")) {
    const JsonFields handoff = top.object("lane_handoff", "the hand-off between a device's lanes");
    result.lane_handoff.samples = static_cast<int>(handoff.optional_integer("samples", 0, 0, 1 << 30));
    result.lane_handoff.seconds = handoff.optional_number("seconds", 0.0, NumberRule::kNonNegative);
  }
  if (top.has("parked_handoff")) {
    const JsonFields handoff = top.object("parked_handoff", "the hand-off to a worker gone to sleep");
    result.parked_handoff.samples = static_cast<int>(handoff.optional_integer("samples", 0, 0, 1 << 30));
    result.parked_handoff.seconds = handoff.optional_number("seconds", 0.0, NumberRule::kNonNegative);
    result.parked_handoff.spin_seconds = handoff.optional_number("spin_seconds", 0.0, NumberRule::kNonNegative);
  }
  if (top.has("op_times")) {
    each_element(top, "op_times", "measured op times",
                 [&](const JsonFields& entry) { result.op_times.push_back(parse_op_time(entry)); });
  }
  result.notes = parse_strings(top, "notes");
  result.one_thread_kinds = parse_strings(top, "one_thread_kinds");
  if (top.has("cell_pointwise_seconds_per_unit")) {
    const JsonFields pointwise =
        top.object("cell_pointwise_seconds_per_unit", "a cell's gate arithmetic per (row, unit), by cell kind");
    for (const auto& [kind, value] : pointwise.raw().items()) {
      result.cell_pointwise_seconds_per_unit[kind] = pointwise.checked_number(value, kind, NumberRule::kNonNegative);
    }
  }
  if (top.has("kernel_passes")) result.kernel_passes = parse_kernel_passes(top);
  result.last_level_cache_bytes = top.optional_integer("last_level_cache_bytes", 0, 0, int64_t{1} << 50);
  result.effective_cache_bytes = top.optional_integer("effective_cache_bytes", 0, 0, int64_t{1} << 50);
  if (top.has("weight_stream")) {
    each_element(top, "weight_stream", "weights streamed from memory", [&](const JsonFields& entry) {
      entry.allow_only({"threads", "running", "rows", "bytes_per_second"}, "a weight stream rate");
      WeightStreamTime time;
      time.threads = static_cast<int>(entry.integer("threads", "the pool device's threads", 1, 1 << 16));
      time.running = static_cast<int>(entry.integer("running", "devices streaming at once", 1, 1 << 16));
      time.rows = entry.optional_integer("rows", 8, 1, int64_t{1} << 20);
      time.bytes_per_second = entry.number("bytes_per_second", "weights from memory", NumberRule::kPositive);
      result.weight_stream.push_back(time);
    });
  }
  return result;
}

}  // namespace

std::string calibration_to_json(const CalibrationResult& result) {
  using nlohmann::json;
  json gemm = json::array();
  for (const GemmRate& rate : result.gemm) {
    json entry = {{"m", rate.m}, {"n", rate.n}, {"k", rate.k}, {"math", rate.math}, {"seconds", rate.seconds},
                  {"flops_per_second", rate.flops_per_second}};
    if (rate.threads > 1) entry["threads"] = rate.threads;
    if (rate.running > 1) entry["running"] = rate.running;
    gemm.push_back(entry);
  }
  json copies = json::array();
  for (const CopySeries& series : result.copies) {
    json points = json::array();
    for (const CopyPoint& point : series.points) {
      points.push_back({{"bytes", point.bytes}, {"seconds", point.seconds}, {"bytes_per_second", point.bytes_per_second}});
    }
    copies.push_back({{"kind", series.kind},
                      {"src_device", series.src_device},
                      {"dst_device", series.dst_device},
                      {"peer_access", series.peer_access},
                      {"latency_seconds", series.latency_seconds},
                      {"bandwidth_bytes_per_second", series.bandwidth_bytes_per_second},
                      {"points", points}});
  }
  json conv = json::array();
  for (const ConvRate& rate : result.conv) {
    conv.push_back({{"signature", rate.signature}, {"seconds", rate.seconds}, {"flops_per_second", rate.flops_per_second}});
  }
  json ops = json::array();
  for (const OpTime& op : result.op_times) {
    json entry{{"signature", op.signature},
               {"example", op.example},
               {"flops", op.flops},
               {"bytes", op.bytes},
               {"seconds", op.seconds},
               {"min_seconds", op.min_seconds},
               {"max_seconds", op.max_seconds}};
    if (op.shares > 1) entry["shares"] = op.shares;  // one share (every GPU time) is left unsaid
    if (op.running > 0) entry["running"] = op.running;
    ops.push_back(std::move(entry));
  }
  json document{
      {"schema", result.schema},
      {"date", result.date},
      {"host", result.host},
      {"device",
       {{"index", result.device},
        {"name", result.device_name},
        {"sm_count", result.sm_count},
        {"memory_bytes", result.memory_bytes},
        {"compute_capability", result.compute_capability},
        {"partitions", result.partitions}}},
      {"software",
       {{"driver", result.driver}, {"runtime", result.runtime}, {"cublas", result.cublas}, {"cudnn", result.cudnn}}},
      {"dtype", result.dtype},
      {"repeats", result.repeats},
      {"gemm", gemm},
      {"conv", conv},
      {"copies", copies},
      {"launch",
       {{"kernels", result.launch.kernels},
        {"host_seconds_per_launch", result.launch.host_seconds_per_launch},
        {"device_seconds_per_kernel", result.launch.device_seconds_per_kernel}}},
      {"lane_handoff", {{"samples", result.lane_handoff.samples}, {"seconds", result.lane_handoff.seconds}}},
      {"op_times", ops},
      {"notes", result.notes},
  };
  if (!result.one_thread_kinds.empty()) document["one_thread_kinds"] = result.one_thread_kinds;  // cpu only
  if (!result.cell_pointwise_seconds_per_unit.empty()) {  // cpu only
    document["cell_pointwise_seconds_per_unit"] = result.cell_pointwise_seconds_per_unit;
  }
  if (result.kernel_passes.measured()) {  // cpu only
    json im2col = json::array();
    for (const Im2colTime& time : result.kernel_passes.im2col) {
      im2col.push_back({{"threads", time.threads},
                        {"seconds_per_value", time.seconds_per_value},
                        {"seconds_per_call", time.seconds_per_call}});
    }
    document["kernel_passes"] = {{"fill_seconds_per_value", result.kernel_passes.fill_seconds_per_value},
                                 {"activation_seconds_per_value", result.kernel_passes.activation_seconds_per_value},
                                 {"im2col", im2col}};
    if (!result.kernel_passes.pool_seconds_per_window_value.empty()) {
      document["kernel_passes"]["pool_seconds_per_window_value"] = result.kernel_passes.pool_seconds_per_window_value;
    }
  }
  if (result.last_level_cache_bytes > 0) document["last_level_cache_bytes"] = result.last_level_cache_bytes;  // cpu
  if (result.effective_cache_bytes > 0) document["effective_cache_bytes"] = result.effective_cache_bytes;  // cpu
  if (!result.weight_stream.empty()) {  // cpu only
    json stream = json::array();
    for (const WeightStreamTime& time : result.weight_stream) {
      stream.push_back({{"threads", time.threads},
                        {"running", time.running},
                        {"rows", time.rows},
                        {"bytes_per_second", time.bytes_per_second}});
    }
    document["weight_stream"] = stream;
  }
  if (result.parked_handoff.samples > 0) {  // cpu only
    document["parked_handoff"] = {{"samples", result.parked_handoff.samples},
                                  {"seconds", result.parked_handoff.seconds},
                                  {"spin_seconds", result.parked_handoff.spin_seconds}};
  }
  // GPU calibrations only: files without it read as unmeasured.
  if (result.host_issue.steps > 0) {
    document["host_issue"] = {{"steps", result.host_issue.steps},
                              {"seconds_per_step", result.host_issue.seconds_per_step}};
  }
  return document.dump(2) + "\n";
}

CalibrationResult parse_calibration_result(std::string_view text, const std::string& source) {
  const json document = parse_json_text(text, source);
  CalibrationResult result = parse_document(document, source);  // its messages first: a wrong type, a missing field
  check_measurement_ranges(document, "", source);
  return result;
}

CalibrationResult load_calibration_result(const std::string& path) {
  return parse_calibration_result(read_input_file(path), path);
}

}  // namespace splitscope::calibration
