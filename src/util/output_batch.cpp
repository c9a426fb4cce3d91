#include "util/output_batch.hpp"

#include "util/errors.hpp"

namespace splitscope {

void OutputBatch::fail(const std::string& option, const std::exception& error, bool others) const {
  // The other outputs are never published after this: say so, since a user
  // who sees one failure may look for the rest.
  const std::string rest = others ? "; the other output files were not written" : "";
  if (const auto* input = dynamic_cast<const InputError*>(&error)) {
    throw InputError(option, "", std::string(input->what()) + rest);
  }
  throw RunError(option + ": " + error.what() + rest);
}

void OutputBatch::add(const std::string& option, const std::string& path, std::string_view content) {
  if (!writes_) return;
  if (path.empty()) return;
  try {
    entries_.push_back({option, StagedFile(path, content)});
  } catch (const std::exception& error) {
    fail(option, error, !entries_.empty());
  }
}

void OutputBatch::add(const std::string& option, const std::string& path, const ContentWriter& write) {
  if (!writes_) return;
  if (path.empty()) return;
  try {
    entries_.push_back({option, StagedFile(path, write)});
  } catch (const std::exception& error) {
    fail(option, error, !entries_.empty());
  }
}

std::vector<std::string> OutputBatch::publish() {
  std::vector<std::string> written;
  for (const bool in_place : {true, false}) {
    for (Entry& entry : entries_) {
      if (entry.file.in_place() != in_place) continue;
      try {
        entry.file.publish();
      } catch (const std::exception& error) {
        fail(entry.option, error, entries_.size() > 1);
      }
      if (!in_place) written.push_back(entry.file.path() + " (" + entry.option + ")");
    }
  }
  entries_.clear();
  return written;
}

}  // namespace splitscope
