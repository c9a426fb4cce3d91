#include "sim/calibration_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "util/json_fields.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

using nlohmann::json;

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

/// The elements of an array member, each as a reader at "field[i]".
std::vector<JsonFields> elements(const JsonFields& parent, std::string_view field) {
  std::vector<JsonFields> list;
  if (!parent.has(field)) return list;
  const json& array = parent.raw().at(std::string(field));
  if (!array.is_array()) parent.fail(field, "must be an array, got " + json_type_name(array));
  for (size_t i = 0; i < array.size(); ++i) {
    const std::string path = fmt::format("{}[{}]", parent.path_of(field), i);
    if (!array[i].is_object()) {
      throw InputError(parent.source(), path, "must be an object, got " + json_type_name(array[i]));
    }
    list.emplace_back(array[i], path, parent.source());
  }
  return list;
}

std::optional<MeasuredLink> median_link(const std::vector<MeasuredLink>& series) {
  if (series.empty()) return std::nullopt;
  std::vector<double> latencies;
  std::vector<double> bandwidths;
  for (const MeasuredLink& link : series) {
    latencies.push_back(link.latency_seconds);
    bandwidths.push_back(link.bytes_per_second);
  }
  return MeasuredLink{median(latencies), median(bandwidths)};
}

MeasuredDevice parse_document(const json& doc, const std::string& source) {
  if (!doc.is_object()) {
    throw InputError(source, "", "a calibration file is a JSON object, got " + json_type_name(doc));
  }
  const JsonFields top(doc, "", source);
  const std::string schema = top.string("schema", std::string(kCalibrationSchema));
  if (schema != kCalibrationSchema) {
    top.fail("schema", fmt::format("'{}' is not a calibration file this build reads; expected {} (written by "
                                   "`splitscope calibrate`)",
                                   schema, kCalibrationSchema));
  }
  MeasuredDevice measured;
  measured.source = source;
  measured.date = top.optional_string("date", "");
  measured.dtype = top.string("dtype", "the math the ops were timed in");

  const JsonFields device = top.object("device", "the GPU measured");
  measured.device_name = device.string("name", "the GPU's name");
  measured.compute_capability = device.optional_string("compute_capability", "");
  measured.memory_bytes = device.integer("memory_bytes", "the GPU's memory in bytes", 1, INT64_MAX);
  if (top.has("software")) {
    measured.driver = top.object("software", "").optional_string("driver", "");
  }

  const JsonFields launch = top.object("launch", "the launch overhead measured");
  measured.launch_seconds =
      launch.number("device_seconds_per_kernel", "device time per empty kernel", NumberRule::kNonNegative);

  for (const JsonFields& op : elements(top, "op_times")) {
    const std::string signature = op.string("signature", "the op's op_signature()");
    measured.op_seconds[signature] = op.number("seconds", "the median time", NumberRule::kPositive);
  }
  for (const JsonFields& gemm : elements(top, "gemm")) {
    if (gemm.string("math", "the product's precision") != measured.dtype) continue;
    measured.best_gemm_flops_per_second =
        std::max(measured.best_gemm_flops_per_second,
                 gemm.number("flops_per_second", "the product's rate", NumberRule::kPositive));
  }
  std::vector<MeasuredLink> peer;
  std::vector<MeasuredLink> staged;
  for (const JsonFields& series : elements(top, "copies")) {
    const std::string kind = series.string("kind", "the kind of copy");
    const bool is_peer = kind == "peer" && series.optional_bool("peer_access", false);
    if (!is_peer && kind != "host_staged") continue;
    MeasuredLink link;
    // A least-squares intercept can come out slightly negative: no latency.
    link.latency_seconds =
        std::max(0.0, series.number("latency_seconds", "the fitted latency", NumberRule::kFinite));
    link.bytes_per_second = series.number("bandwidth_bytes_per_second", "the fitted bandwidth", NumberRule::kPositive);
    (is_peer ? peer : staged).push_back(link);
  }
  measured.peer = median_link(peer);
  measured.host_staged = median_link(staged);
  return measured;
}

void set_link(LinkSpec& spec, const MeasuredLink& link) {
  spec.bandwidth_gbps = link.bytes_per_second / 1e9;
  spec.latency_us = link.latency_seconds * 1e6;
}

}  // namespace

MeasuredDevice parse_calibration_text(std::string_view text, const std::string& source) {
  return parse_document(parse_json_text(text, source), source);
}

MeasuredDevice load_calibration_file(const std::string& path) {
  return parse_calibration_text(read_input_file(path), path);
}

Machine apply_calibration(Machine machine, const MeasuredDevice& measured) {
  DeviceSpec& device = machine.device;
  device.name = measured.device_name;
  device.memory_gib = static_cast<double>(measured.memory_bytes) / kBytesPerGib;
  device.launch_overhead_us = measured.launch_seconds * 1e6;
  if (!device.peak_tflops.count(measured.dtype) && measured.best_gemm_flops_per_second > 0) {
    device.peak_tflops[measured.dtype] = measured.best_gemm_flops_per_second / 1e12;
  }
  if (device.peak_tflops.count(measured.dtype)) device.matrix_math = measured.dtype;

  std::string links = "no link measured for this topology";
  TopologySpec& topology = machine.topology;
  if (topology.kind != TopologyKind::kHostStaged && measured.peer) {
    set_link(topology.link, *measured.peer);
    links = "device ports from peer copies";
  } else if (topology.kind == TopologyKind::kHostStaged && measured.host_staged) {
    set_link(topology.bus, *measured.host_staged);
    links = "bus from host-staged copies";
  }

  CalibrationTable& table = machine.calibration;
  for (const auto& [signature, seconds] : measured.op_seconds) table.op_times_us[signature] = seconds * 1e6;
  table.comment = fmt::format(
      "{}: measured {} on {} (compute capability {}, driver {}); {} op shapes timed in {}; launch overhead, "
      "memory and {} measured; matrix math {}",
      measured.source, measured.date.empty() ? "(no date)" : measured.date, measured.device_name,
      measured.compute_capability.empty() ? "?" : measured.compute_capability,
      measured.driver.empty() ? "?" : measured.driver, measured.op_seconds.size(), measured.dtype, links,
      device.matrix_math == measured.dtype ? measured.dtype
                                           : device.matrix_math + " (no peak for " + measured.dtype + ")");
  machine.name += "+calibrated";
  return machine;
}

}  // namespace splitscope
