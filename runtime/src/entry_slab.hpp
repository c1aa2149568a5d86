#pragma once
/// detail::entry_slab: where a pool keeps its entries.

#include <cstddef>
#include <memory>
#include <new>
#include <vector>

#include "pool_entry.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace scenert::detail {

/// Pool entries in chunks rather than one allocation each. A tick reads the service object, and
/// an embedder that allocates its services one after another gets them packed together only if
/// nothing else lands between them: the fewer pages a pass over a million services spans, the
/// fewer TLB misses it takes. Freed entries are reused; chunks are kept, so memory follows the
/// peak of services in the pool.
/// Thread-safety: none; the pool calls it under its lock.
class entry_slab {
 public:
  entry_slab() = default;
  entry_slab(const entry_slab&) = delete;
  entry_slab& operator=(const entry_slab&) = delete;

  /// A fresh entry.
  pool_entry* make() {
    if (free_ == nullptr) grow();
    slot* s = free_;
    free_ = s->next;
    unpoison(s);
    return ::new (static_cast<void*>(s->bytes)) pool_entry;
  }
  /// Destroys `e` and keeps its storage for the next make().
  void release(pool_entry* e) noexcept {
    e->~pool_entry();
    auto* s = reinterpret_cast<slot*>(e);
    s->next = free_;
    free_ = s;
    poison(s);
  }

 private:
  union slot {
    slot* next;
    alignas(pool_entry) std::byte bytes[sizeof(pool_entry)];
  };
  static constexpr std::size_t chunk = 256;

  void grow() {
    chunks_.push_back(std::make_unique<slot[]>(chunk));
    slot* c = chunks_.back().get();
    for (std::size_t i = chunk; i-- > 0;) {
      c[i].next = free_;
      free_ = &c[i];
      poison(&c[i]);
    }
  }
  // Under AddressSanitizer a free entry (all but its link) is poisoned, so a stale pointer to a
  // removed service's entry is still caught although the slab keeps the memory.
  static void poison(slot* s) noexcept {
#if defined(__SANITIZE_ADDRESS__)
    ASAN_POISON_MEMORY_REGION(s->bytes + sizeof(slot*), sizeof(slot) - sizeof(slot*));
#else
    (void)s;
#endif
  }
  static void unpoison(slot* s) noexcept {
#if defined(__SANITIZE_ADDRESS__)
    ASAN_UNPOISON_MEMORY_REGION(s, sizeof(slot));
#else
    (void)s;
#endif
  }

  std::vector<std::unique_ptr<slot[]>> chunks_;
  slot* free_ = nullptr;
};

}  // namespace scenert::detail
