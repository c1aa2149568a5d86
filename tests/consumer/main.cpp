// Links against the installed package and uses its public API.
#include <scenert/config/table_loader.hpp>
#include <scenert/runtime/result.hpp>

#include <cstdio>

enum class demo_errc { ok = 0, odd };

static scenert::result<int, demo_errc> half(int x) {
  if (x % 2) return scenert::fail(demo_errc::odd, "odd");
  return x / 2;
}

int main() {
  auto r = half(8);
  if (!r || *r != 4) return 1;
  const auto table = scenert::parse_table(R"({"version": 1, "scenes": []})", "inline.json");
  if (table.ok() || table.diagnostics.empty()) return 1;
  std::puts("consumer: scenert package found and linked");
  return 0;
}
