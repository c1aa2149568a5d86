#include <scenert/config/table_loader.hpp>

#include "json_reader.hpp"
#include "table_builder.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <system_error>
#include <unordered_set>

namespace scenert {

namespace {

using detail::diagnostic_sink;
using detail::json;

struct text_position {
  std::uint32_t line = 1, column = 1;
};

// `offset` is a 0-based byte index; columns count bytes, as most editors' "go to byte" do for ASCII.
text_position position_of(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  text_position pos;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n')
      ++pos.line, pos.column = 1;
    else
      ++pos.column;
  }
  return pos;
}

std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto lead = static_cast<unsigned char>(s[i]);
  const std::size_t n = lead < 0x80           ? 1
                        : (lead >> 5) == 0x6  ? 2
                        : (lead >> 4) == 0xE  ? 3
                        : (lead >> 3) == 0x1E ? 4
                                              : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  return n;
}

// Messages quote the input; invalid UTF-8 in the input must not make the message invalid text.
std::string valid_utf8(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence_length(s, i);
    if (n == 0)
      out += "\xEF\xBF\xBD", ++i;
    else
      out.append(s.substr(i, n)), i += n;
  }
  return out;
}

// Finds nesting deeper than max_table_depth before the parser sees it, with its position.
bool check_depth(std::string_view text, diagnostic_sink& sink) {
  std::size_t depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_table_depth) {
        const auto pos = position_of(text, i);
        sink.add("", fmt::format("syntax error: nesting deeper than {} levels", max_table_depth), pos.line,
                 pos.column);
        return false;
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return true;
}

using dom_parser = nlohmann::detail::json_sax_dom_parser<json>;

// The library's DOM builder, plus: the position of a syntax error, and duplicate keys (which the
// plain parser would silently resolve to the last value — a classic hand-editing mistake).
class table_parser : public dom_parser {
 public:
  explicit table_parser(json& out) : dom_parser(out, false) {}

  bool null() { return note_value(), dom_parser::null(); }
  bool boolean(bool v) { return note_value(), dom_parser::boolean(v); }
  bool number_integer(json::number_integer_t v) { return note_value(), dom_parser::number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return note_value(), dom_parser::number_unsigned(v); }
  bool number_float(json::number_float_t v, const std::string& s) {
    return note_value(), dom_parser::number_float(v, s);
  }
  bool string(std::string& v) { return note_value(), dom_parser::string(v); }
  bool binary(json::binary_t& v) { return note_value(), dom_parser::binary(v); }
  bool start_object(std::size_t n) { return push(false), dom_parser::start_object(n); }
  bool start_array(std::size_t n) { return push(true), dom_parser::start_array(n); }
  bool end_object() { return frames_.pop_back(), dom_parser::end_object(); }
  bool end_array() { return frames_.pop_back(), dom_parser::end_array(); }
  bool key(std::string& k) {
    frame& f = frames_.back();
    if (!f.keys.insert(k).second) duplicates_.push_back(current_pointer() + "/" + escape(k));
    f.key = k;
    return dom_parser::key(k);
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    error_position_ = position;
    error_ = e.what();
    return false;
  }

  [[nodiscard]] const std::vector<std::string>& duplicates() const noexcept { return duplicates_; }
  [[nodiscard]] std::optional<std::size_t> error_position() const { return error_position_; }
  [[nodiscard]] const std::string& error() const noexcept { return error_; }

 private:
  struct frame {
    bool is_array = false;
    std::size_t next_index = 0;
    std::string key;  // of the child being read
    std::unordered_set<std::string> keys;
  };

  void push(bool is_array) {
    note_value();
    frames_.emplace_back();
    frames_.back().is_array = is_array;
  }
  void note_value() {
    if (!frames_.empty() && frames_.back().is_array)
      frames_.back().key = std::to_string(frames_.back().next_index++);
  }
  static std::string escape(std::string_view k) { return detail::child_pointer("", k).substr(1); }
  std::string current_pointer() const {
    std::string p;
    for (std::size_t i = 0; i + 1 < frames_.size(); ++i) p += "/" + escape(frames_[i].key);
    return p;
  }

  std::vector<frame> frames_;
  std::vector<std::string> duplicates_;
  std::optional<std::size_t> error_position_;
  std::string error_;
};

// "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error while ..." -> the tail.
std::string syntax_reason(const std::string& what) {
  std::string_view w = what;
  if (const auto col = w.find("column "); col != std::string_view::npos) {
    if (const auto colon = w.find(": ", col); colon != std::string_view::npos) w.remove_prefix(colon + 2);
  } else if (const auto bracket = w.find("] "); bracket != std::string_view::npos) {
    w.remove_prefix(bracket + 2);
  }
  std::string reason = valid_utf8(w);
  return reason.starts_with("syntax error") ? reason : "syntax error: " + reason;
}

bool parse_json(std::string_view text, json& out, diagnostic_sink& sink) {
  table_parser parser(out);
  bool ok = false;
  try {
    ok = json::sax_parse(text, &parser, json::input_format_t::json, true);
  } catch (const std::exception& e) {  // defensive: the parser reports through parse_error
    sink.add("", syntax_reason(e.what()));
    return false;
  }
  if (!ok) {
    const auto pos = position_of(text, parser.error_position().value_or(1) - 1);
    sink.add("", syntax_reason(parser.error()), pos.line, pos.column);
    return false;
  }
  for (const auto& p : parser.duplicates()) sink.add(p, "duplicate key; only one value may be given");
  return true;
}

load_result invalid(std::string source, diagnostic_sink& sink) {
  return {load_status::invalid, std::move(source), nullptr, sink.take()};
}

}  // namespace

load_result parse_table(std::string_view text, std::string source_name) {
  diagnostic_sink sink;
  if (text.size() > max_table_bytes) {
    sink.add("", fmt::format("the table is larger than {} bytes", max_table_bytes));
    return invalid(std::move(source_name), sink);
  }
  json document;
  if (!check_depth(text, sink) || !parse_json(text, document, sink))
    return invalid(std::move(source_name), sink);
  auto table = std::make_shared<scene_table>(detail::build_table(document, sink));
  if (!sink.empty()) return invalid(std::move(source_name), sink);
  return {load_status::ok, std::move(source_name), std::move(table), {}};
}

load_result load_table_file(const std::filesystem::path& path) {
  const std::string source = path.string();
  std::ifstream in(path, std::ios::binary);
  std::error_code ec;
  const auto reject = [&](std::string why) {
    return load_result{load_status::unreadable, source, nullptr, {{"", "cannot read: " + std::move(why)}}};
  };
  if (std::filesystem::is_directory(path, ec)) return reject("is a directory");
  if (!in) return reject(std::error_code(errno, std::generic_category()).message());
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return reject("read error");
  return parse_table(text.view(), source);
}

std::string format_diagnostic(const diagnostic& d) {
  if (d.line != 0) return fmt::format("{}:{}: {}", d.line, d.column, d.reason);
  if (d.pointer.empty()) return d.reason;
  return fmt::format("{}: {}", d.pointer, d.reason);
}

std::string format_diagnostic(std::string_view source, const diagnostic& d) {
  if (d.line == 0 && d.pointer.empty()) return fmt::format("{}: {}", source, d.reason);
  return fmt::format("{}:{}", source, format_diagnostic(d));
}

std::string_view to_string(scene_kind k) noexcept { return scene_kind_names[static_cast<std::size_t>(k)]; }

std::string_view to_string(scene_structure s) noexcept {
  return scene_structure_names[static_cast<std::size_t>(s)];
}

std::string_view to_string(allocation_policy p) noexcept {
  return allocation_policy_names[static_cast<std::size_t>(p)];
}

std::string_view to_string(instance_mode m) noexcept {
  return instance_mode_names[static_cast<std::size_t>(m)];
}

std::string_view to_string(monster_kind k) noexcept {
  return monster_kind_names[static_cast<std::size_t>(k)];
}

}  // namespace scenert
