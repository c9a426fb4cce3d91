#include "cli/did_you_mean.hpp"

#include <algorithm>

namespace splitscope::cli {
namespace {

/// Levenshtein distance: insertions, deletions and substitutions of one character.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::optional<std::string> nearest_name(const std::string& word, const std::vector<std::string>& known) {
  std::optional<std::string> best;
  if (word.size() < 4) return best;  // "-x": every short name is one edit away
  size_t best_distance = std::max<size_t>(1, word.size() / 3) + 1;
  for (const std::string& name : known) {
    // "--device" for "--devices": a prefix counts as one edit, whatever its length.
    const bool prefix = word.size() >= 3 && name.rfind(word, 0) == 0;
    const size_t distance = prefix ? 1 : edit_distance(word, name);
    if (distance < best_distance) {
      best = name;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace splitscope::cli
