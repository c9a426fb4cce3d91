#pragma once
/// \file
/// Finds network and machine files by name. A MODEL (or MACHINE) argument is
/// a path to a file, or the name of a file in the zoo: models/networks/NAME.json
/// (models/machines/NAME.json; a machine's learned rate rules,
/// models/rules/NAME.json). The zoo is looked for in $SPLITSCOPE_MODELS,
/// then in the source tree splitscope was built from, then in ./models.

#include <string>
#include <vector>

namespace splitscope {

/// Which part of the zoo: "networks", "machines" or "rules" (achieved-rate
/// rules a machine file names, sim/costs/achieved_rates.hpp).
enum class ZooShelf { kNetworks, kMachines, kRules };

/// The models/ folders searched, in order, that exist.
std::vector<std::string> zoo_roots();

/// Names (file stems) on a shelf, sorted, from the first root that has the shelf.
/// Raw GPU calibrations (NAME.calibration.json, which `calibrate` may write
/// beside the machine files it derives) are not machines and are left out.
std::vector<std::string> zoo_names(ZooShelf shelf);

/// A path if `name_or_path` is an existing file; else the zoo file of that
/// name. Throws InputError listing the shelf's names when there is neither.
std::string resolve_zoo_file(ZooShelf shelf, const std::string& name_or_path);

}  // namespace splitscope
