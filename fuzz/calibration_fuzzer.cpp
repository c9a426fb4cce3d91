// Calibration files (splitscope.calibration/1), as `calibrate --from` reads
// them: parsed, written back and read again (the header promises a round
// trip), and every machine file derived from them, each of which must read
// back as a machine file: the GPU machines (`calibrate --from`,
// machine_from_calibration) and the pooled host machine of a cpu raw file
// (`calibrate --backend cpu --from`, cpu_machine_from_calibration: the gemm
// grid per share count, kernel_passes, weight_stream, the op times alone and
// busy). Either derivation may refuse a file the other takes (a cpu raw file
// has no peer series; a GPU one no share counts), so each is tried on its own.

#include <optional>

#include "calibration/calibration_file.hpp"
#include "fuzz/fuzz_support.hpp"
#include "sim/machine/calibrated_machine.hpp"
#include "sim/machine/machine_file.hpp"

namespace {

/// A derived machine must read back as the machine file `calibrate` writes.
void derived_machine_reads_back(const splitscope::Machine& machine, const std::string& path) {
  using namespace splitscope;
  try {
    parse_machine_text(machine_to_json(machine), path);
  } catch (const std::exception& e) {
    fuzz::invariant_failed("a machine derived from a calibration does not read back", &e);
  }
}

splitscope::CalibratedMachineOptions fuzz_machine_options(const std::string& name) {
  splitscope::CalibratedMachineOptions options;
  options.name = name;
  options.calibration_file = "fuzz.json";
  options.source = "fuzz.json";
  return options;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace splitscope;
  std::optional<calibration::CalibrationResult> parsed;
  fuzz::refusals_are_input_errors([&] {
    calibration::CalibrationResult result =
        calibration::parse_calibration_result(fuzz::as_text(data, size), "fuzz.json");
    const std::string written = calibration::calibration_to_json(result);
    try {
      if (calibration::calibration_to_json(calibration::parse_calibration_result(written, "written.json")) !=
          written) {
        fuzz::invariant_failed("a calibration written by calibration_to_json reads back differently");
      }
    } catch (const std::exception& e) {
      fuzz::invariant_failed("a calibration written by calibration_to_json does not read back", &e);
    }
    parsed = std::move(result);
  });
  if (!parsed) return 0;
  const calibration::CalibrationResult& result = *parsed;
  fuzz::refusals_are_input_errors([&] {
    for (const CalibratedMachineFile& file : calibrated_machine_files(result, "fuzz-machine.json")) {
      CalibratedMachineOptions options = fuzz_machine_options(file.name);
      options.link = file.link;
      derived_machine_reads_back(machine_from_calibration(result, options), file.path);
    }
  });
  fuzz::refusals_are_input_errors([&] {
    derived_machine_reads_back(cpu_machine_from_calibration(result, fuzz_machine_options("fuzz-host")),
                               "fuzz-host.json");
  });
  return 0;
}
