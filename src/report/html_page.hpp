#pragma once
/// \file
/// The start of every page splitscope writes (run, compare, sweep, validate,
/// demo, search, lessons): one head, so the pages agree on the doctype,
/// language and character set and each says only its title and its style.

#include <string>
#include <string_view>

namespace splitscope {

/// `<!DOCTYPE html>` through `<body>`, with `title` escaped and `style`
/// (CSS, written as given) in the head.
std::string html_page_start(std::string_view title, std::string_view style);

}  // namespace splitscope
