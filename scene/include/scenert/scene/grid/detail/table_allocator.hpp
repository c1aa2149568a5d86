#pragma once
// The allocator of the grid's large per-instance tables (areas, slots).

#include <cstddef>

namespace scenert::grid::detail {

/// Memory for a table: from 1 MiB on, 2 MiB aligned and advised for transparent huge pages (a large
/// map's areas then cost a few TLB entries instead of thousands); plain operator new below.
void* allocate_table(std::size_t bytes, std::size_t align);
/// Frees what allocate_table returned for the same size and alignment.
void deallocate_table(void* p, std::size_t bytes, std::size_t align) noexcept;

/// A std::allocator stand-in over allocate_table.
template <class T>
struct table_allocator {
  using value_type = T;
  table_allocator() noexcept = default;
  template <class U>
  table_allocator(const table_allocator<U>&) noexcept {}  // NOLINT: rebinding is implicit
  T* allocate(std::size_t n) { return static_cast<T*>(allocate_table(n * sizeof(T), alignof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { deallocate_table(p, n * sizeof(T), alignof(T)); }
  friend bool operator==(const table_allocator&, const table_allocator&) noexcept { return true; }
};

}  // namespace scenert::grid::detail
