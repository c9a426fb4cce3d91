#include "cli/precision_option.hpp"

#include <fmt/format.h>

#include "util/errors.hpp"

namespace splitscope::cli {

void add_precision_option(CLI::App& command, std::string& precision) {
  command.add_option("--precision", precision,
                     "fp32 | tf32 | bf16 | fp16 | amp: what tensors are stored in and products run on "
                     "(default fp32; cuda runs fp32 and tf32, cpu all but tf32; docs/precision.md)");
}

Precision precision_option(const std::string& text) {
  return text.empty() ? Precision::kFp32 : parse_precision(text);
}

Machine machine_at_precision(Machine machine, Precision precision) {
  const std::string math(matrix_math_of(precision));
  const std::string source = machine.source.empty() ? machine.name : machine.source;
  if (machine.device.peak_tflops.count(math) == 0) {
    throw InputError(source, "device.peak_tflops." + math,
                     fmt::format("machine '{}' gives no {} peak, which --precision {} prices products at; add the "
                                 "dense {} TFLOP/s of its datasheet, or use another --precision",
                                 machine.name, math, to_string(precision), math));
  }
  const bool float32 = storage_bytes(precision).activation == storage_bytes(Precision::kFp32).activation;
  if (!machine.calibration.op_times_us.empty() && (math != machine.device.matrix_math || !float32)) {
    throw InputError(source, "calibration",
                     fmt::format("machine '{}' prices ops from times measured with {} math on float32 tensors, "
                                 "which do not hold at --precision {}; use a datasheet machine (e.g. "
                                 "h100-nvlink-8), or calibrate at that precision",
                                 machine.name, machine.device.matrix_math, to_string(precision)));
  }
  machine.device.matrix_math = math;
  return machine;
}

void require_precision_backend(Backend backend, Precision precision) {
  if (backend == Backend::kSim || precision == Precision::kFp32) return;
  if (backend == Backend::kCuda && precision == Precision::kTf32) return;  // float32 storage: --dtype tf32
  // The cpu backend rounds what the plan stores (exec/cpu/stored_precision.hpp); tf32 changes the
  // products' math instead, which its float32 BLAS products cannot reproduce.
  if (backend == Backend::kCpu && precision != Precision::kTf32) return;
  const std::string runs = backend == Backend::kCuda ? "stores float32 tensors (fp32, or tf32 products)"
                                             : "runs fp32, bf16, fp16 and amp (its products are full float32, "
                                               "not tf32)";
  const std::string instead = backend == Backend::kCuda ? "" : ", or run tf32 on a GPU with --backend cuda";
  throw UnavailableError(fmt::format("--precision {}: the {} backend {}; predict it with --backend sim --machine NAME "
                                     "(e.g. h100-nvlink-8){}",
                                     to_string(precision), to_string(backend), runs, instead));
}

}  // namespace splitscope::cli
