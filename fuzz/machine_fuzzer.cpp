// Machine files (docs/machine-format.md): parsed and checked; a machine that
// is accepted must write out (machine_to_json) to a file that reads back to
// the same text, as the header promises.

#include "fuzz/fuzz_support.hpp"
#include "sim/machine/machine_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace splitscope;
  fuzz::refusals_are_input_errors([&] {
    const Machine machine = parse_machine_text(fuzz::as_text(data, size), "fuzz.json");
    const std::string written = machine_to_json(machine);
    try {
      if (machine_to_json(parse_machine_text(written, "written.json")) != written) {
        fuzz::invariant_failed("a machine file written by machine_to_json reads back differently");
      }
    } catch (const std::exception& e) {
      fuzz::invariant_failed("a machine file written by machine_to_json does not read back", &e);
    }
  });
  return 0;
}
