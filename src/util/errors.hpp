#pragma once
/// \file
/// The three kinds of failure that cross a module boundary, each with its own
/// exit code (docs/reports.md): bad input (2), an unavailable backend or device (3),
/// and any other failure at run time (1).

#include <stdexcept>
#include <string>

namespace splitscope {

/// Bad input: a malformed network or machine file, or an impossible option.
/// The CLI prints `error: <source>: <field>: <problem>` and exits 2.
class InputError : public std::runtime_error {
 public:
  /// \param source the file (or "option", "--devices", ...) the input came from
  /// \param field  the JSON path or option name; may be empty
  /// \param problem what is wrong, and where possible what to do
  InputError(std::string source, std::string field, std::string problem);

  const std::string& source() const { return source_; }
  const std::string& field() const { return field_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string source_;
  std::string field_;
  std::string problem_;
};

/// The asked-for backend or device does not exist here; the message says what
/// to use instead. Exit code 3.
class UnavailableError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A failure while running: a library call, a deadline, an output check.
/// Exit code 1; the message names the failing call or op.
class RunError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Exit codes of the `splitscope` command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitUnavailable = 3;

}  // namespace splitscope
