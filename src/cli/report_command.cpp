// `splitscope report FILE.json --html OUT.html`: draws a saved run, compare,
// validate or sweep report as the page its command's own --html writes
// (report/saved_report.hpp says what a page drawn from JSON leaves out), so
// that pages need not be kept beside the JSON evidence they are drawn from.

#include <fmt/format.h>

#include <memory>

#include "cli/command.hpp"
#include "cli/command_outputs.hpp"
#include "report/saved_report.hpp"
#include "util/errors.hpp"
#include "util/json_text.hpp"
#include "util/output_batch.hpp"
#include "util/output_files.hpp"

namespace splitscope::cli {
namespace {

struct ReportOptions {
  std::string input;
  std::string html;
};

int report_command(const ReportOptions& options) {
  if (options.html.empty()) {
    throw InputError("--html", "", "say where to write the page: splitscope report " + options.input +
                                       " --html PAGE.html");
  }
  check_command_outputs({{"--html", options.html}}, {options.input});
  const std::string page = saved_report_html(read_input_file(options.input), options.input);
  OutputBatch files;
  files.add("--html", options.html, page);
  files.publish();
  fmt::print("wrote {}\n", options.html);
  return 0;
}

}  // namespace

Command add_report_command(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* sub = app.add_subcommand(
      "report", "Draw a saved run, compare, validate or sweep JSON report as the page its command's --html writes");
  sub->add_option("REPORT", options->input, "a JSON report written by run, compare, validate or sweep --report")
      ->required();
  sub->add_option("--html", options->html, "write the self-contained HTML page here")->required();
  return {sub, [options](const std::vector<std::string>&) { return report_command(*options); }};
}

}  // namespace splitscope::cli
