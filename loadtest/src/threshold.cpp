#include <scenert/loadtest/threshold.hpp>

#include <algorithm>
#include <array>
#include <charconv>

#include <fmt/format.h>

namespace scenert::loadtest {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

bool holds(const threshold& t, double v) {
  if (t.op == "<") return v < t.limit;
  if (t.op == "<=") return v <= t.limit;
  if (t.op == ">") return v > t.limit;
  if (t.op == "==") return v == t.limit;
  return v >= t.limit;
}

}  // namespace

result<threshold, threshold_errc> parse_threshold(std::string_view text,
                                                  const std::vector<std::string>& known) {
  auto at = text.find_first_of("<>");
  const bool equals = at == std::string_view::npos && text.find("==") != std::string_view::npos;
  if (equals) at = text.find("==");
  if (at == std::string_view::npos)
    return fail(threshold_errc::syntax,
                fmt::format("threshold '{}': expected METRIC<NUMBER (or <=, >, >=, ==)", text));
  threshold t;
  t.text = std::string(text);
  t.metric = std::string(trim(text.substr(0, at)));
  const bool two = equals || (at + 1 < text.size() && text[at + 1] == '=');
  t.op = std::string(text.substr(at, two ? 2 : 1));
  const auto number = trim(text.substr(at + t.op.size()));
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), t.limit);
  if (ec != std::errc{} || end != number.data() + number.size() || number.empty())
    return fail(threshold_errc::syntax, fmt::format("threshold '{}': '{}' is not a number", text, number));
  if (std::find(known.begin(), known.end(), t.metric) == known.end())
    return fail(threshold_errc::unknown_metric, fmt::format("threshold '{}': unknown metric '{}' (known: {})",
                                                            text, t.metric, fmt::join(known, ", ")));
  return t;
}

std::vector<std::string> missed_thresholds(const std::vector<threshold>& thresholds,
                                           const std::map<std::string, double>& measured) {
  std::vector<std::string> missed;
  for (const auto& t : thresholds) {
    const auto it = measured.find(t.metric);
    if (it == measured.end())
      missed.push_back(fmt::format("{} not measured", t.text));
    else if (!holds(t, it->second))
      missed.push_back(fmt::format("{} missed: {}", t.text, it->second));
  }
  return missed;
}

}  // namespace scenert::loadtest
