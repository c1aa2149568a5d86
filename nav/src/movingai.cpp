#include <scenert/nav/movingai.hpp>

#include <fmt/format.h>

#include <charconv>
#include <fstream>
#include <limits>
#include <sstream>

namespace scenert::nav {
namespace {

// The cap keeps a hostile header from asking for gigabytes before a single row is read.
constexpr std::uint32_t max_side = 1u << 14;

// Splits text into lines (without '\r'), counting from 1.
class line_reader {
 public:
  explicit line_reader(std::string_view text) : text_(text) {}
  bool next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    const auto end = text_.find('\n', pos_);
    line = text_.substr(pos_, end == std::string_view::npos ? std::string_view::npos : end - pos_);
    pos_ = end == std::string_view::npos ? text_.size() : end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++number_;
    return true;
  }
  [[nodiscard]] std::uint32_t number() const { return number_; }
  [[nodiscard]] std::size_t remaining() const { return text_.size() - pos_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  std::uint32_t number_ = 0;
};

nav_error bad(std::string_view file, std::uint32_t line, std::string_view reason) {
  return nav_fail(nav_errc::bad_format, fmt::format("{}:{}: {}", file, line == 0 ? 1 : line, reason));
}

template <class T>
bool parse_number(std::string_view s, T& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size();
}

// "key value" header lines of a .map.
bool header_value(std::string_view line, std::string_view key, std::uint32_t& out) {
  if (line.substr(0, key.size() + 1) != fmt::format("{} ", key)) return false;
  return parse_number(line.substr(key.size() + 1), out) && out > 0 && out <= max_side;
}

nav_result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return nav_fail(nav_errc::unreadable_file, fmt::format("{}: cannot open", path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

nav_result<movingai_map> parse_rows(line_reader& lines, std::string_view file, movingai_map map) {
  std::string_view row;
  for (std::uint32_t y = 0; y < map.height; ++y) {
    if (!lines.next(row)) return bad(file, lines.number() + 1, fmt::format("missing map row {} of {}", y + 1, map.height));
    if (row.size() != map.width)
      return bad(file, lines.number(), fmt::format("row of {} cells, want {}", row.size(), map.width));
    for (std::uint32_t x = 0; x < map.width; ++x)
      map.blocked[std::size_t{y} * map.width + x] = (row[x] == '.' || row[x] == 'G') ? 0 : 1;
  }
  while (lines.next(row) && row.substr(0, 1) != "/")  // '/' opens the benchmark's closing notes
    if (!row.empty()) return bad(file, lines.number(), "text after the last map row");
  return map;
}

// Splits a tab-separated row into exactly 9 fields.
bool split_fields(std::string_view line, std::string_view (&fields)[9]) {
  std::size_t n = 0, pos = 0;
  for (; n < 9; ++n) {
    const auto tab = line.find('\t', pos);
    fields[n] = line.substr(pos, tab == std::string_view::npos ? std::string_view::npos : tab - pos);
    if (tab == std::string_view::npos) break;
    pos = tab + 1;
  }
  return n == 8;
}

nav_result<scenario> parse_scenario(std::string_view line, std::string_view file, std::uint32_t number) {
  std::string_view f[9];
  if (!split_fields(line, f)) return bad(file, number, "want 9 tab-separated fields");
  scenario s;
  s.map = std::string(f[1]);
  s.line = number;
  const bool ok = parse_number(f[0], s.bucket) && parse_number(f[2], s.map_width) &&
                  parse_number(f[3], s.map_height) && parse_number(f[4], s.start.x) &&
                  parse_number(f[5], s.start.y) && parse_number(f[6], s.goal.x) && parse_number(f[7], s.goal.y) &&
                  parse_number(f[8], s.length);
  if (!ok) return bad(file, number, "a field is not a number");
  if (!(s.length >= 0) || s.length > std::numeric_limits<float>::max()) return bad(file, number, "bad length");
  if (s.start.x >= s.map_width || s.goal.x >= s.map_width || s.start.y >= s.map_height || s.goal.y >= s.map_height)
    return bad(file, number, "start or goal outside the stated map size");
  return s;
}

}  // namespace

nav_result<movingai_map> parse_movingai_map(std::string_view text, std::string_view file) {
  line_reader lines(text);
  std::string_view line;
  movingai_map map;
  if (!lines.next(line) || line != "type octile") return bad(file, lines.number(), "want 'type octile'");
  if (!lines.next(line) || !header_value(line, "height", map.height))
    return bad(file, lines.number(), fmt::format("want 'height H' with 0 < H <= {}", max_side));
  if (!lines.next(line) || !header_value(line, "width", map.width))
    return bad(file, lines.number(), fmt::format("want 'width W' with 0 < W <= {}", max_side));
  if (!lines.next(line) || line != "map") return bad(file, lines.number(), "want 'map'");
  // A header must not make a short file allocate: the rows must be there before the cells are.
  if (lines.remaining() < std::size_t{map.width} * map.height)
    return bad(file, lines.number() + 1, fmt::format("{} bytes left for {} rows of {} cells", lines.remaining(),
                                                     map.height, map.width));
  map.blocked.assign(std::size_t{map.width} * map.height, 1);
  return parse_rows(lines, file, std::move(map));
}

nav_result<std::vector<scenario>> parse_movingai_scen(std::string_view text, std::string_view file) {
  line_reader lines(text);
  std::string_view line;
  if (!lines.next(line) || (line != "version 1" && line != "version 1.0"))
    return bad(file, lines.number(), "want 'version 1'");
  std::vector<scenario> out;
  while (lines.next(line)) {
    if (line.empty()) continue;
    if (line.front() == '/') break;  // the benchmark's closing notes and citation
    auto s = parse_scenario(line, file, lines.number());
    if (!s) return s.error();
    out.push_back(std::move(s).value());
  }
  return out;
}

nav_result<movingai_map> load_movingai_map(const std::string& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  return parse_movingai_map(*text, path);
}

nav_result<std::vector<scenario>> load_movingai_scen(const std::string& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  return parse_movingai_scen(*text, path);
}

}  // namespace scenert::nav
