#pragma once
/// detail::mailbox: a lock-free multi-producer, single-consumer queue of messages with a close
/// gate, so that a message posted while its service is deactivated is either run or reported.

#include <atomic>
#include <cstddef>
#include <cstdint>

#include <scenert/runtime/unique_function.hpp>

namespace scenert::detail {

/// An intrusive queue after Vyukov's MPSC design: producers swap the head (one atomic exchange),
/// the consumer walks from a dummy node. post() allocates one node and takes no lock.
/// Thread-safety: post(), depth(), dropped() from any thread; pop(), close(), open() from the one
/// thread that drives the service.
class mailbox {
 public:
  using message = unique_function<void()>;

  mailbox();
  ~mailbox();
  mailbox(const mailbox&) = delete;
  mailbox& operator=(const mailbox&) = delete;

  /// Queues `m`; false (and counted as dropped) once closed.
  [[nodiscard]] bool post(message m);
  /// Takes the oldest message whose producer has finished linking it; false when none is.
  bool pop(message& out);
  /// Rejects later posts and waits until every post already past the gate has linked its
  /// message, so that a following drain sees all of them.
  void close() noexcept;
  /// Accepts posts again.
  void open() noexcept;

  /// Hints the consumer's cache lines (a pool ticking many services prefetches ahead).
  void prefetch() const noexcept { __builtin_prefetch(&head_); }

  [[nodiscard]] std::size_t depth() const noexcept { return depth_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }
  [[nodiscard]] bool closed() const noexcept { return closed_.load(std::memory_order_relaxed); }

 private:
  struct node {
    std::atomic<node*> next{nullptr};
    message fn;
  };

  // Not aligned to cache lines: a quiet service's tick reads no mailbox (the service's own flag
  // says whether mail came), and an over-aligned allocation per service scatters the heap that
  // the embedder's service objects are carved from (a million services spanned twice the pages).
  std::atomic<node*> head_;  // producers: the newest node
  node* tail_;               // consumer: the dummy before the oldest message
  std::atomic<std::uint32_t> in_flight_{0};
  std::atomic<bool> closed_{false};
  std::atomic<std::size_t> depth_{0};
  std::atomic<std::uint64_t> dropped_{0};
};

}  // namespace scenert::detail
