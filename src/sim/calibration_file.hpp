#pragma once
/// \file
/// Calibration files, as `splitscope calibrate` writes them (schema
/// splitscope.calibration/1, src/exec/cuda/calibration.hpp): what one GPU was
/// measured to do. The simulator takes from one the measured time of every op
/// shape it timed (by op_signature(), overriding the roofline for those
/// ops), the launch overhead, the device's name and memory, the precision the
/// ops were timed in, and the copy bandwidth and latency of the kind of link
/// the machine's topology has; apply_calibration() puts them into a Machine.
/// Fields the simulator does not use are ignored, so the file may grow.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "sim/machine.hpp"

namespace splitscope {

/// The value of a calibration file's "schema" field.
inline constexpr std::string_view kCalibrationSchema = "splitscope.calibration/1";

/// A copy series' fitted line: t = latency + bytes / bandwidth.
struct MeasuredLink {
  double latency_seconds = 0;       ///< a negative fitted intercept is read as 0
  double bytes_per_second = 0;
};

/// What the simulator uses of a calibration file.
struct MeasuredDevice {
  std::string source;              ///< the file, for messages
  std::string date;
  std::string device_name;
  std::string compute_capability;
  std::string driver;
  int64_t memory_bytes = 0;
  std::string dtype;               ///< the math the ops were timed in: "fp32", "tf32", "bf16"
  double launch_seconds = 0;       ///< device time per kernel, launched back to back
  /// The fastest measured matrix product in `dtype`, FLOP/s (0 if none was timed).
  double best_gemm_flops_per_second = 0;
  std::map<std::string, double> op_seconds;  ///< median time by op signature
  /// Medians over the series of each kind: peer copies with peer access
  /// enabled, and copies staged through pinned host memory.
  std::optional<MeasuredLink> peer;
  std::optional<MeasuredLink> host_staged;
};

/// Parses a calibration file's text; `source` names it in messages. Every
/// problem is an InputError `<file>: <json path>: <problem>`.
MeasuredDevice parse_calibration_text(std::string_view text, const std::string& source);

/// Reads and parses a calibration file.
MeasuredDevice load_calibration_file(const std::string& path);

/// `machine` with the measurements in:
/// - the calibration table: every measured op time (µs), with a comment
///   saying device, driver, date and precision;
/// - launch overhead, device name and memory: the measured ones;
/// - matrix math: the precision the ops were timed in, so that the ops the
///   table does not cover are priced in the same math (its peak: the
///   machine's, or else the fastest measured product);
/// - links: a switch's or multi-node machine's device ports take the peer
///   copies' bandwidth and latency, a host-staged machine's bus the staged
///   copies'; kinds the file did not measure stay as they were (NICs always).
/// The name becomes "<name>+calibrated".
Machine apply_calibration(Machine machine, const MeasuredDevice& measured);

}  // namespace splitscope
