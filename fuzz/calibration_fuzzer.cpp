// Calibration files (splitscope.calibration/1), as `calibrate --from` reads
// them: parsed, written back and read again (the header promises a round
// trip), and every machine file derived from them, each of which must read
// back as a machine file.

#include "calibration/calibration_file.hpp"
#include "fuzz/fuzz_support.hpp"
#include "sim/calibrated_machine.hpp"
#include "sim/machine_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace splitscope;
  fuzz::refusals_are_input_errors([&] {
    const calibration::CalibrationResult result =
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
    for (const CalibratedMachineFile& file : calibrated_machine_files(result, "fuzz-machine.json")) {
      CalibratedMachineOptions options;
      options.name = file.name;
      options.link = file.link;
      options.calibration_file = "fuzz.json";
      options.source = "fuzz.json";
      const Machine machine = machine_from_calibration(result, options);
      try {
        parse_machine_text(machine_to_json(machine), file.path);
      } catch (const std::exception& e) {
        fuzz::invariant_failed("a machine derived from a calibration does not read back", &e);
      }
    }
  });
  return 0;
}
