#pragma once
/// detail::service_state: the part of a service a tick does not read, kept out of the service
/// object so that the object's first cache line holds the tick's data and the derived class's.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include <scenert/runtime/inbox.hpp>
#include <scenert/runtime/service.hpp>

namespace scenert::detail {

struct pool_entry;

/// Thread-safety: as the fields say; the mailbox is multi-producer, single-consumer.
struct service_state {
  explicit service_state(std::string n) : name(std::move(n)) {}

  // A small ring: most services get a few messages a tick; a burst spills and is kept in order.
  inbox<service::message> box{32};
  std::string name;
  std::atomic<std::uint64_t> failures{0};
  std::atomic<detail::pool_entry*> entry{nullptr};  // owned by the pool while added
  std::atomic<const void*> owner{nullptr};          // that pool, set and cleared under its lock
};
// Allocated once per service, between the embedder's service objects: an over-aligned type is
// carved out of the heap with padding and split chunks that scatter those objects (a million
// no-op services ticked 40% slower so).
static_assert(alignof(service_state) <= alignof(std::max_align_t), "keep service_state plainly aligned");

}  // namespace scenert::detail
