#include "cli/command_outputs.hpp"

#include <iostream>

#include <fmt/format.h>

#include "ir/zoo.hpp"

namespace splitscope::cli {

void check_command_outputs(const std::vector<OutputFile>& outputs, const std::vector<std::string>& inputs,
                           ZooFiles zoo) {
  KeptFiles kept;
  kept.inputs = inputs;
  if (zoo != ZooFiles::kReplaceable) kept.folders = zoo_roots();
  if (zoo == ZooFiles::kKeptWithoutForce) kept.force_option = "--force";
  check_output_files(outputs, kept);
}

void publish_outputs(OutputBatch& files, bool quiet) {
  const std::vector<std::string> written_files = files.publish();
  if (quiet) return;
  for (const std::string& written : written_files) std::cerr << fmt::format("wrote {}\n", written);
}

}  // namespace splitscope::cli
