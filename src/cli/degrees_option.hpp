#pragma once
/// \file
/// `--degrees T,P,D`: the tensor, pipeline and data degrees of
/// `--strategy hybrid` (partitioners/hybrid.hpp), on run and plan.

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "plan/plan.hpp"

namespace splitscope::cli {

/// Registers --degrees on `command`, into `text` (empty: not given).
CLI::Option* add_degrees_option(CLI::App& command, std::string& text);

/// The degrees `text` gives `strategy`: nullopt when not given; InputError
/// (exit 2) when malformed, or given to a strategy other than hybrid.
std::optional<ParallelDegrees> degrees_option(const std::string& text, const std::string& strategy);

}  // namespace splitscope::cli
