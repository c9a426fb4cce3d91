#pragma once
/// \file
/// Where a command runs its plans, resolved once per command: the backend,
/// typed, and for the simulator the machine it names, read once. Commands
/// make it from their options (cli/execution_options.hpp) and pass it down
/// to everything that prices a plan or makes an executor, so that no layer
/// below parses a backend name or a machine file again.

#include <functional>
#include <memory>
#include <string>

#include "run/backend.hpp"
#include "sim/machine/machine.hpp"

namespace splitscope {

/// A machine a command names (`--machine`, `--predict-on`), read at its first
/// use and then kept: the command's checks that came before the first read
/// still come first (a wrong machine file fails where it always did), and
/// every later use (the plans' pricing, the simulator, the search) shares the
/// one reading. Copies share it too.
class NamedMachine {
 public:
  using Reader = std::function<Machine(const std::string& name)>;

  NamedMachine() = default;
  /// `name` as given (a zoo name, a file, or "" for none), read by `read`.
  NamedMachine(std::string name, Reader read);

  const std::string& name() const { return name_; }
  bool named() const { return !name_.empty(); }
  /// The machine as its file gives it (before any --precision): read on the
  /// first call (whose error, for a wrong name or file, it throws), the same
  /// object after.
  const Machine& machine() const;

 private:
  struct Reading {
    Reader read;
    std::unique_ptr<const Machine> machine;
  };
  std::string name_;
  std::shared_ptr<Reading> reading_;
};

/// The backend a command's plans run on, and the machine the simulator
/// predicts on (named only for Backend::kSim).
struct RunTarget {
  Backend backend = Backend::kCpu;
  NamedMachine machine;

  bool simulated() const { return backend == Backend::kSim; }
  /// The name reports and messages print.
  std::string backend_name() const { return std::string(to_string(backend)); }
};

}  // namespace splitscope
