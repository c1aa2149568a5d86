// Any bytes through parse_table: no crash, hang, leak or UB, and the result keeps its promises.
#include <scenert/config/table_loader.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace {

// The oracle counts a sequence's length from its lead byte's leading ones (0: one byte; 2 to 4: that
// many), independently of the loader's own table.
bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const int ones = std::countl_one(static_cast<unsigned char>(s[i]));
    const std::size_t n = ones == 0 ? 1 : static_cast<std::size_t>(ones);
    if (ones == 1 || ones > 4 || i + n > s.size()) return false;
    for (std::size_t k = 1; k < n; ++k)
      if (std::countl_one(static_cast<unsigned char>(s[i + k])) != 1) return false;
    i += n;
  }
  return true;
}

void require(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const scenert::load_result r = scenert::parse_table(text, "fuzz.json");
  require(r.ok() == (r.table != nullptr));
  require(r.ok() == r.diagnostics.empty());
  require(r.status != scenert::load_status::unreadable);
  require(r.diagnostics.size() <= scenert::max_diagnostics + 1);
  for (const auto& d : r.diagnostics) {
    require(!d.reason.empty());
    require(d.pointer.empty() || d.pointer.front() == '/');
    require(valid_utf8(scenert::format_diagnostic("fuzz.json", d)));
  }
  if (r.ok())
    for (const auto& s : r.table->scenes)
      require(r.table->find_map(s.map) != nullptr && s.hard_capacity >= s.capacity);
  return 0;
}
