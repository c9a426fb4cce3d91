#include "cli/command_line_words.hpp"

#include <cctype>
#include <functional>
#include <vector>

#include "cli/did_you_mean.hpp"

namespace splitscope::cli {
namespace {

/// "--name" or "-n", and not a negative number (`--seed -1` is a value).
bool looks_like_option(const std::string& word) {
  if (word.size() < 2 || word.front() != '-') return false;
  const char second = word[1];
  return second == '-' ? word.size() > 2 : std::isalpha(static_cast<unsigned char>(second)) != 0;
}

std::vector<std::string> option_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : option->get_snames()) names.push_back("-" + name);
  }
  return names;
}

CLI::App* subcommand_named(CLI::App& command, const std::string& name) {
  const std::vector<CLI::App*> found =
      command.get_subcommands([&name](CLI::App* sub) { return sub->get_name() == name; });
  return found.empty() ? nullptr : found.front();
}

/// One option-like word of a subcommand: its command, the option as spelt
/// ("--bytes", "-n"), and its value where one is attached ("--bytes=1K")
/// or follows it.
struct OptionWord {
  CLI::App* command;
  std::string name;
  std::optional<std::string> value;
};

/// Calls `visit` for each option-like word after a subcommand's name, until
/// one answers a problem. Stops at `--` and at a prefix command.
std::optional<std::string> visit_option_words(CLI::App& top, int argc, char** argv,
                                              const std::function<std::optional<std::string>(const OptionWord&)>& visit) {
  CLI::App* command = &top;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") return std::nullopt;
    if (!looks_like_option(word)) {
      // A subcommand's name moves down to it (`demo rnn`); anything else is a value.
      if (CLI::App* sub = subcommand_named(*command, word); sub != nullptr) {
        command = sub;
        if (command->get_prefix_command()) return std::nullopt;
      }
      continue;
    }
    if (command == &top) continue;  // --help, --version: CLI11 answers those
    const size_t equals = word.find('=');
    OptionWord option{command, word.substr(0, equals), std::nullopt};
    if (option.name.size() > 2 && option.name[1] != '-') {
      option.value = option.name.substr(2);  // "-n2": a short option with its value attached
      option.name = option.name.substr(0, 2);
    } else if (equals != std::string::npos) {
      option.value = word.substr(equals + 1);
    } else if (i + 1 < argc && !looks_like_option(argv[i + 1])) {
      option.value = argv[i + 1];
    }
    if (std::optional<std::string> problem = visit(option)) return problem;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> unknown_option_problem(CLI::App& top, int argc, char** argv) {
  return visit_option_words(top, argc, argv, [](const OptionWord& word) -> std::optional<std::string> {
    if (word.command->get_option_no_throw(word.name) != nullptr) return std::nullopt;
    const std::optional<std::string> near = nearest_name(word.name, option_names(*word.command));
    const std::string command = word.command->get_name();
    return "unknown option " + word.name + " for " + command +
           (near ? " (did you mean " + *near + "?)" : "; see 'splitscope " + command + " --help'");
  });
}

std::optional<std::string> empty_list_item_problem(CLI::App& top, int argc, char** argv) {
  return visit_option_words(top, argc, argv, [](const OptionWord& word) -> std::optional<std::string> {
    const CLI::Option* option = word.command->get_option_no_throw(word.name);
    if (option == nullptr || option->get_delimiter() != ',' || !word.value) return std::nullopt;
    const std::string& value = *word.value;
    if (!value.empty() && value.front() != ',' && value.back() != ',' && value.find(",,") == std::string::npos) {
      return std::nullopt;
    }
    return word.name + ": '" + value + "' has an empty item; separate the values by single commas, e.g. " +
           word.name + " A,B";
  });
}

}  // namespace splitscope::cli
