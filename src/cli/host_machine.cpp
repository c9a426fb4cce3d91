// `host` as a machine name (host_machine.hpp).

#include "cli/host_machine.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <system_error>

#include "exec/cpu/cpu_calibration.hpp"
#include "exec/cpu/host_info.hpp"
#include "cli/calibration_progress.hpp"
#include "cli/zoo_samples.hpp"
#include "git_revision.h"
#include "sim/machine/calibrated_machine.hpp"
#include "sim/machine/machine_file.hpp"
#include "util/atomic_file.hpp"
#include "util/errors.hpp"

namespace splitscope::cli {
namespace {

namespace fs = std::filesystem;

/// Lower-case letters and digits, runs of anything else one '-'.
std::string slug(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "cpu" : out;
}

fs::path cache_folder() {
  auto variable = [](const char* name) -> std::string {
    const char* value = std::getenv(name);
    return value == nullptr ? "" : value;
  };
  if (const std::string own = variable("SPLITSCOPE_CACHE_DIR"); !own.empty()) return own;
  if (const std::string xdg = variable("XDG_CACHE_HOME"); !xdg.empty()) return fs::path(xdg) / "splitscope";
  if (const std::string home = variable("HOME"); !home.empty()) return fs::path(home) / ".cache" / "splitscope";
  throw InputError("--machine host", "",
                   "has no cache folder to keep this host's calibration in: set SPLITSCOPE_CACHE_DIR (or HOME)");
}

}  // namespace

std::string host_machine_path() {
  const HostInfo host = read_host_info();
  return (cache_folder() / fmt::format("host-{}-{}t-{}.json", slug(host.cpu_model), host.hardware_threads,
                                       slug(SPLITSCOPE_GIT_REVISION)))
      .string();
}

std::string resolve_machine(const std::string& name) {
  if (name != kHostMachine) return name;
  const std::string path = host_machine_path();
  if (fs::exists(path)) return path;
  std::error_code error;
  fs::create_directories(fs::path(path).parent_path(), error);
  if (error) {
    throw InputError("--machine host", "",
                     fmt::format("cannot make the cache folder {}: {}; set SPLITSCOPE_CACHE_DIR to one that can be "
                                 "written", fs::path(path).parent_path().string(), error.message()));
  }
  std::cerr << fmt::format("calibrating this host for the machine 'host' (once; kept in {})\n", path);
  CpuCalibrationOptions calibration;
  calibration.ops = zoo_samples(small_zoo_networks());
  CalibratedMachineOptions options;
  // Named as it was asked for: the file's stem (host-<cpu model>-<threads>t-<revision>) keys the cache,
  // but as a name it made 50-character headings (`predicted host-intel-r-xeon-r-processor-2t-67257b1`);
  // the cpu model is the machine's device name, printed beside it.
  options.name = kHostMachine;
  options.source = "the calibration of this host";
  calibration::CalibrationResult measured;
  {
    CalibrationProgress progress("calibrating this host");
    calibration.on_stage = progress.callback();
    measured = calibrate_cpu(calibration);
  }
  const Machine machine = cpu_machine_from_calibration(measured, options);
  write_file_atomically(path, machine_to_json(machine));
  return path;
}

}  // namespace splitscope::cli
