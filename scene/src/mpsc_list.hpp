#pragma once
// A lock-free multi-producer, single-consumer list: producers push with one CAS, the consumer takes
// everything at once with one exchange and gets it back in push order.

#include <atomic>
#include <utility>

namespace scenert::detail {

template <class T>
class mpsc_list {
 public:
  mpsc_list() = default;
  mpsc_list(const mpsc_list&) = delete;
  mpsc_list& operator=(const mpsc_list&) = delete;
  ~mpsc_list() {
    take_all([](T&&) {});
  }

  void push(T value) {
    auto* n = new node{std::move(value), head_.load(std::memory_order_relaxed)};
    while (!head_.compare_exchange_weak(n->next, n, std::memory_order_release, std::memory_order_relaxed)) {
    }
  }

  /// Calls fn(T&&) for every value pushed so far, oldest first. Single consumer.
  template <class F>
  void take_all(F&& fn) {
    node* n = head_.exchange(nullptr, std::memory_order_acquire);
    node* reversed = nullptr;
    while (n) {
      node* next = n->next;
      n->next = reversed;
      reversed = n;
      n = next;
    }
    while (reversed) {
      node* next = reversed->next;
      fn(std::move(reversed->value));
      delete reversed;
      reversed = next;
    }
  }

  [[nodiscard]] bool empty() const noexcept { return head_.load(std::memory_order_acquire) == nullptr; }

 private:
  struct node {
    T value;
    node* next;
  };
  std::atomic<node*> head_{nullptr};
};

}  // namespace scenert::detail
