// The nav benches' global operator new: counts every allocation, so that a bench can show that a
// warm search allocates nothing. Its own file: defined next to its callers, g++ would inline the
// pair and warn that free() meets new.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace scenert::bench {
std::atomic<std::uint64_t> nav_allocations{0};
}  // namespace scenert::bench

void* operator new(std::size_t n) {
  scenert::bench::nav_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
