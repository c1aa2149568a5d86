#include "json_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace scenert::detail {

namespace {

constexpr std::size_t max_described_bytes = 40;

// Cuts at a UTF-8 character boundary so that a message stays valid text.
std::string cut(std::string s) {
  if (s.size() <= max_described_bytes) return s;
  std::size_t n = max_described_bytes;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  s.resize(n);
  return s + "...";
}

std::string fmt_limit(std::int64_t v) { return fmt::format("{}", v); }

}  // namespace

void diagnostic_sink::add(std::string pointer, std::string reason, std::uint32_t line, std::uint32_t column) {
  if (list_.size() < max_diagnostics) {
    list_.push_back({std::move(pointer), std::move(reason), line, column});
    return;
  }
  if (dropped_++ == 0)
    list_.push_back({"", fmt::format("too many errors; only the first {} are shown", max_diagnostics)});
}

std::string child_pointer(std::string_view parent, std::string_view key) {
  std::string p(parent);
  p.reserve(p.size() + key.size() + 1);
  p += '/';
  for (char c : key) {
    if (c == '~')
      p += "~0";
    else if (c == '/')
      p += "~1";
    else
      p += c;
  }
  return p;
}

std::string child_pointer(std::string_view parent, std::size_t index) {
  return fmt::format("{}/{}", parent, index);
}

std::string describe(const json& v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  return cut(v.dump(-1, ' ', false, json::error_handler_t::replace));
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      const std::size_t same = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + same});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::optional<std::string_view> suggest(std::string_view word, std::span<const std::string_view> candidates) {
  constexpr std::size_t longest_considered = 64;
  if (word.empty() || word.size() > longest_considered) return std::nullopt;
  std::optional<std::string_view> best;
  std::size_t best_distance = 0;
  for (auto c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (!best || d < best_distance) best = c, best_distance = d;
  }
  // A typo changes a few letters; anything further is a different word.
  const std::size_t tolerated = std::max<std::size_t>(2, std::min(word.size(), best ? best->size() : 0) / 3);
  if (best && best_distance <= tolerated && best_distance < word.size()) return best;
  return std::nullopt;
}

void report_type(diagnostic_sink& sink, const std::string& pointer, std::string_view expected,
                 const json& v) {
  sink.add(pointer, fmt::format("must be {}, got {}", expected, describe(v)));
}

std::optional<std::int64_t> read_int(const json& v, const std::string& pointer, int_range range,
                                     diagnostic_sink& sink) {
  const auto below = [&] { sink.add(pointer, fmt::format("must be >= {}, got {}", range.min, describe(v))); };
  const auto above = [&] {
    sink.add(pointer, fmt::format("must be <= {}, got {}", fmt_limit(range.max), describe(v)));
  };
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(range.max)) return above(), std::nullopt;
    const auto i = static_cast<std::int64_t>(u);
    if (i < range.min) return below(), std::nullopt;
    return i;
  }
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i < range.min) return below(), std::nullopt;
    if (i > range.max) return above(), std::nullopt;
    return i;
  }
  if (v.is_number_float()) {
    // JSON Schema counts 5.0 as an integer; so do we, to agree with the schema.
    const double d = v.get<double>();
    if (!std::isfinite(d) || std::trunc(d) != d)
      return report_type(sink, pointer, "an integer", v), std::nullopt;
    if (d < static_cast<double>(range.min)) return below(), std::nullopt;
    if (d > static_cast<double>(range.max)) return above(), std::nullopt;
    return static_cast<std::int64_t>(d);
  }
  report_type(sink, pointer, "an integer", v);
  return std::nullopt;
}

object_reader::object_reader(const json& object, std::string pointer, diagnostic_sink& sink,
                             std::initializer_list<std::string_view> allowed)
    : object_(object), pointer_(std::move(pointer)), sink_(sink), allowed_(allowed) {}

const json* object_reader::find(std::string_view key, presence p) {
  const auto it = object_.find(key);
  if (it != object_.end()) return &*it;
  if (p == presence::required) sink_.add(pointer_, fmt::format("missing required key \"{}\"", key));
  return nullptr;
}

bool object_reader::read_uint(std::string_view key, std::uint32_t& out, int_range range, presence p) {
  const json* v = find(key, p);
  if (!v) return false;
  const auto i = read_int(*v, pointer_to(key), range, sink_);
  if (i) out = static_cast<std::uint32_t>(*i);
  return i.has_value();
}

bool object_reader::read_real(std::string_view key, double& out, real_range range, presence p) {
  const json* v = find(key, p);
  if (!v) return false;
  if (!v->is_number()) return report_type(sink_, pointer_to(key), "a number", *v), false;
  const double d = v->get<double>();
  const std::string at = pointer_to(key);
  if (range.min_exclusive ? d <= range.min : d < range.min)
    return sink_.add(at, fmt::format("must be {} {}, got {}", range.min_exclusive ? ">" : ">=", range.min,
                                     describe(*v))),
           false;
  if (d > range.max)
    return sink_.add(at, fmt::format("must be <= {}, got {}", range.max, describe(*v))), false;
  out = d;
  return true;
}

bool object_reader::read_string(std::string_view key, std::string& out, presence p, bool non_empty) {
  const json* v = find(key, p);
  if (!v) return false;
  if (!v->is_string()) return report_type(sink_, pointer_to(key), "a string", *v), false;
  const auto& s = v->get_ref<const std::string&>();
  if (non_empty && s.empty()) return sink_.add(pointer_to(key), "must not be empty"), false;
  out = s;
  return true;
}

bool object_reader::read_choice(std::string_view key, std::size_t& out,
                                std::span<const std::string_view> names, presence p) {
  const json* v = find(key, p);
  if (!v) return false;
  std::string choices;
  for (auto n : names) choices += fmt::format("{}\"{}\"", choices.empty() ? "" : ", ", n);
  if (!v->is_string())
    return report_type(sink_, pointer_to(key), fmt::format("one of {}", choices), *v), false;
  const auto& s = v->get_ref<const std::string&>();
  const auto it = std::find(names.begin(), names.end(), s);
  if (it != names.end()) return out = static_cast<std::size_t>(it - names.begin()), true;
  std::string reason = fmt::format("must be one of {}, got {}", choices, describe(*v));
  if (auto near = suggest(s, names)) reason += fmt::format("; did you mean \"{}\"?", *near);
  sink_.add(pointer_to(key), std::move(reason));
  return false;
}

void object_reader::forbid(std::string_view key, std::string_view reason) {
  if (object_.contains(key)) sink_.add(pointer_to(key), std::string(reason));
}

void object_reader::finish() {
  for (const auto& [key, value] : object_.items()) {
    if (std::find(allowed_.begin(), allowed_.end(), key) != allowed_.end()) continue;
    std::string reason = "unknown key";
    if (auto near = suggest(key, allowed_)) reason += fmt::format("; did you mean \"{}\"?", *near);
    sink_.add(pointer_to(key), std::move(reason));
  }
}

}  // namespace scenert::detail
