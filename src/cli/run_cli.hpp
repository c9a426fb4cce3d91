#pragma once
/// \file
/// The whole `splitscope` command as a function: main() calls it, and so does
/// the command-line fuzzer (fuzz/cli_fuzzer.cpp), which must not exit the process.

namespace splitscope::cli {

/// Parses the command line, runs the command and turns every error into one
/// `error: ...` line on stderr; returns the exit code (docs/reports.md: 0 done,
/// 1 failure, 2 bad input, 3 unavailable). Never calls exit().
int run_cli(int argc, char** argv);

}  // namespace splitscope::cli
