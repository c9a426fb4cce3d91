// `splitscope lessons [--machine M] [--only 1,4,9] [--measure] [--json FILE] [--html FILE]`: the
// chapter's claims about splitting networks, each run as an experiment (on
// the simulator; 7 and 8 on the cpu backend) with its verdict, its numbers and where it flips
// (docs/lessons.md).

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <set>

#include "cli/command.hpp"
#include "cli/command_outputs.hpp"
#include "cli/network_loading.hpp"
#include "cli/precision_option.hpp"
#include "lessons/lesson.hpp"
#include "lessons/lessons_page.hpp"
#include "report/progress.hpp"
#include "util/output_batch.hpp"
#include "util/errors.hpp"
#include "util/strings.hpp"

namespace splitscope::cli {
namespace {

struct LessonsOptions {
  std::string machine;
  std::vector<int> only;
  std::string json;
  std::string html;
  bool measure = false;
  bool quiet = false;
  std::string precision;  ///< fp32 or not given: the lessons take no other
};

std::string result_text(const LessonResult& result) {
  std::string text = fmt::format("{:>2}. {}\n", result.number, result.claim);
  text += fmt::format("    {}: {}\n", to_string(result.verdict), result.why);
  text += fmt::format("    setup: {}\n", result.setup);
  if (result.flip) text += fmt::format("    {}\n", flip_text(*result.flip));
  if (result.measured) {
    text += fmt::format("    measured: {}: {}\n", to_string(result.measured->verdict), result.measured->why);
    text += fmt::format("    measured setup: {}\n", result.measured->setup);
  }
  return text;
}

int run_lessons(const LessonsOptions& options) {
  std::set<int> known;
  std::string known_list;
  for (const Lesson& lesson : lessons()) {
    known.insert(lesson.number);
    known_list += (known_list.empty() ? "" : ", ") + std::to_string(lesson.number);
  }
  if (!options.precision.empty() && precision_option(options.precision) != Precision::kFp32) {
    throw InputError("--precision", options.precision,
                     fmt::format("the lessons test classic claims in fp32, the precision of the papers they come "
                                 "from, on presets chosen for each claim, and take no other; see {} change a split "
                                 "with `splitscope compare NET --precision {} --backend sim --machine h100-nvlink-8`",
                                 options.precision, options.precision));
  }
  for (int number : options.only) {
    if (!known.count(number)) {
      throw InputError("--only", "",
                       fmt::format("there is no lesson {} here; the lessons that run are {}", number, known_list));
    }
  }
  check_command_outputs({{"--json", options.json}, {"--html", options.html}},
                        {input_file(ZooShelf::kMachines, options.machine)});
  Progress progress = stderr_progress(options.quiet);
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  std::vector<LessonResult> shown;  // for the page
  for (const Lesson& lesson : lessons()) {
    if (!options.only.empty() &&
        std::find(options.only.begin(), options.only.end(), lesson.number) == options.only.end()) {
      continue;
    }
    progress.begin_run(fmt::format("lesson {}", lesson.number));
    progress.on_repeat(0, 1);
    LessonSettings settings;
    settings.machine = options.machine;
    settings.measure = options.measure;
    const LessonResult result = lesson.run(settings);
    progress.end_run();
    std::cout << result_text(result) << "\n";
    results.push_back(to_json(result));
    if (!options.html.empty()) shown.push_back(result);
  }
  OutputBatch files;
  if (!options.json.empty()) {
    const nlohmann::ordered_json document{{"schema", "splitscope.lessons/1"}, {"lessons", results}};
    files.add("--json", options.json,
              document.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
  }
  if (!options.html.empty()) files.add("--html", options.html, lessons_page(shown, options.machine));
  publish_outputs(files, options.quiet);
  return 0;
}

}  // namespace

Command add_lessons_command(CLI::App& app) {
  auto options = std::make_shared<LessonsOptions>();
  CLI::App* sub = app.add_subcommand(
      "lessons", "Run the classic claims about splitting networks as experiments: verdict, numbers, where each flips");
  sub->add_option("--machine", options->machine,
                  "run every lesson on this machine (a machine file, or a name from models/machines) instead of "
                  "each lesson's own preset");
  sub->add_option("--only", options->only, "the lessons to run, e.g. --only 1,4,9")->delimiter(',');
  sub->add_flag("--measure", options->measure,
               "also run lessons 1, 2, 3, 4 and 6 for real on this machine's cpu backend, at small sizes");
  sub->add_option("--json", options->json, "also write the results as JSON (docs/lessons.md)");
  sub->add_option("--html", options->html,
                  "also write a self-contained page: a panel per lesson with its curve, flip and timelines");
  sub->add_flag("--quiet,-q", options->quiet, "no progress on stderr");
  sub->add_option("--precision", options->precision,
                  "fp32 only: the lessons test classic fp32 claims (other precisions: compare --precision)");
  return {sub, [options](const std::vector<std::string>&) { return run_lessons(*options); }};
}

}  // namespace splitscope::cli
