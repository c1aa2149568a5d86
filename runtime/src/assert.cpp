#include <scenert/runtime/assert.hpp>

#include <cstdio>
#include <cstdlib>

namespace scenert::detail {

void assert_fail(const char* expr, const char* msg, const char* file, int line) noexcept {
  std::fprintf(stderr, "%s:%d: assertion failed: %s (%s)\n", file, line, expr, msg);
  std::abort();
}

}  // namespace scenert::detail
