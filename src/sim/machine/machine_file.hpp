#pragma once
/// \file
/// Machine files (models/machines/NAME.json, docs/machine-format.md): reading
/// with validation, and writing. Every problem is an InputError
/// `<file>: <json path>: <problem>`, e.g.
/// `m.json: topology.bus.bandwidth_GBps: must be positive, got 0`.

#include <string>
#include <string_view>

#include "sim/machine/machine.hpp"

namespace splitscope {

/// The value of a machine file's optional "schema" field (machine_to_json writes it).
inline constexpr std::string_view kMachineSchema = "splitscope.machine/1";

/// Most devices a machine file may describe.
inline constexpr int kMaxMachineDevices = 65536;

/// Most streaming multiprocessors a device may have.
inline constexpr int kMaxSmCount = 1 << 20;
/// The largest m, n or k of a gemm rate (a product of 2^30 rows is far past any timed one).
inline constexpr int64_t kMaxGemmDimension = int64_t{1} << 30;

/// Parses a machine from JSON text; `source` names it in messages.
Machine parse_machine_text(std::string_view text, const std::string& source);

/// A machine by zoo name ("h100-nvlink-8") or path; InputError listing the
/// zoo's machines when there is neither such a file nor such a name.
Machine load_machine(const std::string& name_or_path);

/// The machine as a machine file (2-space indented JSON, fields in a fixed
/// order): parse_machine_text(machine_to_json(m)) gives m back. The
/// `calibrate` command writes its measurements with this.
std::string machine_to_json(const Machine& machine);

/// Checks a Machine built in code (e.g. from measurements) by the rules of
/// the file format; throws the same InputError a file with those numbers would.
void check_machine(const Machine& machine);

}  // namespace splitscope
