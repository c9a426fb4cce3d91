#include "report/html_page.hpp"

#include <fmt/format.h>

#include "report/svg_charts.hpp"

namespace splitscope {

std::string html_page_start(std::string_view title, std::string_view style) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{}</style></head>"
      "<body>\n",
      escape_html(title), style);
}

}  // namespace splitscope
