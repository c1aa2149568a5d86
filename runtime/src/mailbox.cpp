#include "mailbox.hpp"

#include <thread>
#include <utility>

namespace scenert::detail {

mailbox::mailbox() : head_(new node), tail_(head_.load(std::memory_order_relaxed)) {}

mailbox::~mailbox() {
  message m;
  while (pop(m)) m = nullptr;
  delete tail_;
}

bool mailbox::post(message m) {
  // Dekker-style gate with close(): both sides write their own flag, then read the other's,
  // all seq_cst, so either this post sees `closed_` or close() sees this post in flight.
  in_flight_.fetch_add(1, std::memory_order_seq_cst);
  if (closed_.load(std::memory_order_seq_cst)) {
    in_flight_.fetch_sub(1, std::memory_order_release);
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  auto* n = new node;
  n->fn = std::move(m);
  depth_.fetch_add(1, std::memory_order_relaxed);
  node* prev = head_.exchange(n, std::memory_order_acq_rel);
  prev->next.store(n, std::memory_order_release);
  in_flight_.fetch_sub(1, std::memory_order_release);
  return true;
}

bool mailbox::pop(message& out) {
  if (head_.load(std::memory_order_acquire) == tail_) return false;  // empty: the node stays unread
  node* next = tail_->next.load(std::memory_order_acquire);
  if (next == nullptr) return false;
  out = std::move(next->fn);
  delete tail_;
  tail_ = next;  // `next` becomes the dummy; its message has been moved out
  depth_.fetch_sub(1, std::memory_order_relaxed);
  return true;
}

void mailbox::close() noexcept {
  closed_.store(true, std::memory_order_seq_cst);
  for (unsigned spins = 0; in_flight_.load(std::memory_order_seq_cst) != 0; ++spins) {
    if (spins > 64) std::this_thread::yield();
  }
}

void mailbox::open() noexcept { closed_.store(false, std::memory_order_seq_cst); }

}  // namespace scenert::detail
