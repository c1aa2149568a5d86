#pragma once
/// inbox<T>: the one way threads hand work to a service. Many producers, one consumer that drains
/// a batch per tick, no allocation per event once warm, a close gate that loses nothing.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <new>
#include <span>
#include <thread>
#include <utility>
#include <vector>

namespace scenert {

/// A bounded ring of slots, each with a sequence number (Vyukov's array queue): a producer claims
/// a slot with one compare-and-swap on the tail and publishes it by its sequence; the consumer
/// reads slots in order and frees them. Built in place: emplace() constructs the event in its slot.
///
/// Bursts larger than the ring (an I/O thread handing over thousands of events in one tick) spill
/// into an overflow vector under a mutex. While anything waits there, every post goes there too,
/// and the consumer takes the overflow only when the ring is empty, so events of one producer come
/// out in the order they went in. The vectors keep their capacity, so a burst allocates once.
///
/// The ring is allocated on the first post: a million quiet services carry no slots.
///
/// Thread-safety: post(), emplace(), depth(), empty(), dropped(), closed() from any thread;
/// drain(), close() and open() from the one consumer thread.
template <class T>
class inbox {
 public:
  /// `ring_capacity` is rounded up to a power of two (at least 2).
  explicit inbox(std::size_t ring_capacity = 256) : mask_(round_up(ring_capacity) - 1) {}
  inbox(const inbox&) = delete;
  inbox& operator=(const inbox&) = delete;
  ~inbox() {
    if (ring* r = ring_.load(std::memory_order_acquire)) {
      for (std::uint64_t pos = r->head.load(std::memory_order_relaxed);; ++pos) {
        slot& s = r->at(pos, mask_);
        if (s.seq.load(std::memory_order_acquire) != pos + 1) break;
        if (s.live) s.value()->~T();
      }
      r->~ring();
      ::operator delete (static_cast<void*>(r), ring::bytes(mask_ + 1), std::align_val_t{ring::align});
    }
  }

  /// Queues `value`; false (and counted as dropped) once closed.
  [[nodiscard]] bool post(T value) { return emplace(std::move(value)); }

  /// Queues a T built from `args` in its slot; false (and counted as dropped) once closed.
  template <class... A>
  [[nodiscard]] bool emplace(A&&... args) {
    const claimed c = claim(1);
    if (c.got == claim_state::closed) return drop();
    if (c.got == claim_state::ring) {
      fill(c.r->at(c.pos, mask_), c.pos, std::forward<A>(args)...);
      return true;
    }
    return spill(1, [&] { overflow_.emplace_back(std::forward<A>(args)...); });
  }

  /// Queues copies of `values`, in order, with one claim on the ring (or one lock when they spill):
  /// a producer that gathers a tick's events for one consumer hands them over at once. False (and
  /// each counted as dropped) once closed.
  [[nodiscard]] bool post_all(std::span<const T> values) {
    if (values.empty()) return !closed();
    const auto k = static_cast<std::uint64_t>(values.size());
    const claimed c = claim(k);
    if (c.got == claim_state::closed) return drop(k);
    if (c.got == claim_state::ring) {
      for (std::uint64_t i = 0; i < k; ++i) fill(c.r->at(c.pos + i, mask_), c.pos + i, values[i]);
      return true;
    }
    return spill(k, [&] { overflow_.insert(overflow_.end(), values.begin(), values.end()); });
  }

  /// Runs `fn(T&)` on up to `max` events, oldest first, and returns how many ran. Stops early at a
  /// slot claimed but not yet filled (its producer is mid-post): the next drain takes it. An
  /// exception from `fn` leaves the rest queued.
  template <class F>
  std::size_t drain(F&& fn, std::size_t max = std::numeric_limits<std::size_t>::max()) {
    struct publish_left {  // depth() from other threads sees the spilled batch still to run
      inbox& box;
      ~publish_left() {
        box.taken_left_.store(box.taken_.size() - box.taken_pos_, std::memory_order_relaxed);
      }
    } on_exit{*this};
    std::size_t n = 0;
    while (n < max) {
      if (taken_pos_ < taken_.size()) {  // a spilled batch goes first: it is older than the ring
        ++n;
        fn(taken_[taken_pos_++]);
        continue;
      }
      if (!taken_.empty()) {
        taken_.clear();
        taken_pos_ = 0;
      }
      switch (pop(fn)) {
        case popped::one:
          ++n;
          continue;
        case popped::hole:
          continue;
        case popped::busy:
          return n;
        case popped::empty:
          break;
      }
      if (!overflowing_.load(std::memory_order_acquire)) return n;
      if (!take_spill()) continue;  // the ring filled meanwhile: its events are older
      if (taken_.empty()) return n;
    }
    return n;
  }

  /// Rejects later posts and waits until every post already past the gate has finished, so that
  /// a following drain sees all of them.
  void close() noexcept {
    const std::uint64_t end = tail_.fetch_or(closed_bit, std::memory_order_acq_rel) & ~closed_bit;
    { std::lock_guard lock(mutex_); }  // a spilling producer inside has finished
    ring* r = ring_.load(std::memory_order_acquire);
    if (r == nullptr) return;
    for (std::uint64_t pos = r->head.load(std::memory_order_relaxed); pos != end; ++pos) {
      for (unsigned spins = 0; r->at(pos, mask_).seq.load(std::memory_order_acquire) != pos + 1; ++spins) {
        if (spins > 64) std::this_thread::yield();
      }
    }
  }
  /// Accepts posts again.
  void open() noexcept { tail_.fetch_and(~closed_bit, std::memory_order_acq_rel); }

  [[nodiscard]] bool closed() const noexcept {
    return (tail_.load(std::memory_order_relaxed) & closed_bit) != 0;
  }
  /// Events queued and not yet run (a moment's view when producers are busy).
  [[nodiscard]] std::size_t depth() const noexcept {
    std::uint64_t in_ring = 0;
    if (const ring* r = ring_.load(std::memory_order_acquire)) {
      const std::uint64_t tail = tail_.load(std::memory_order_relaxed) & ~closed_bit;
      const std::uint64_t head = r->head.load(std::memory_order_relaxed);
      in_ring = tail > head ? tail - head : 0;
    }
    return static_cast<std::size_t>(in_ring) + spilled_.load(std::memory_order_relaxed) +
           taken_left_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] bool empty() const noexcept { return depth() == 0; }
  [[nodiscard]] std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }
  /// Events that went to the overflow since construction (the ring was too small for a burst).
  [[nodiscard]] std::uint64_t spills() const {
    std::lock_guard lock(mutex_);
    return spills_;
  }
  /// Hints the consumer's cache line (a loop draining many inboxes prefetches ahead).
  void prefetch() const noexcept {
    if (const ring* r = ring_.load(std::memory_order_relaxed)) __builtin_prefetch(r);
  }

 private:
  static constexpr std::uint64_t closed_bit = std::uint64_t{1} << 63;

  struct slot {
    std::atomic<std::uint64_t> seq{0};  // == pos: free for pos; == pos + 1: filled for pos
    bool live = false;                  // false: the producer's constructor threw, skip it
    alignas(T) unsigned char bytes[sizeof(T)];
    T* value() noexcept { return std::launder(reinterpret_cast<T*>(bytes)); }
  };
  // The consumer's position on a line of its own, then the slots; one aligned block.
  struct ring {
    static constexpr std::size_t align = 64;
    alignas(align) std::atomic<std::uint64_t> head{0};
    static std::size_t bytes(std::size_t capacity) { return slots_offset() + capacity * sizeof(slot); }
    static constexpr std::size_t slots_offset() { return (sizeof(ring) + align - 1) / align * align; }
    slot* slots() noexcept {
      return reinterpret_cast<slot*>(reinterpret_cast<unsigned char*>(this) + slots_offset());
    }
    slot& at(std::uint64_t pos, std::uint64_t mask) noexcept { return slots()[pos & mask]; }
  };
  enum class popped { one, hole, busy, empty };
  enum class claim_state { ring, spill, closed };
  struct claimed {
    claim_state got;
    ring* r = nullptr;
    std::uint64_t pos = 0;
  };

  // Claims k consecutive slots with one compare-and-swap on the tail; spill when the ring has not
  // room for all k, or while a spill is under way (so a producer's later events follow its earlier).
  claimed claim(std::uint64_t k) {
    if (k > mask_ + 1 || overflowing_.load(std::memory_order_relaxed)) return {claim_state::spill};
    ring* r = ring_.load(std::memory_order_acquire);
    if (r == nullptr) r = install_ring();
    std::uint64_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      if ((pos & closed_bit) != 0) return {claim_state::closed};
      // The consumer frees slots in order: the last of the k free for this round means all are.
      const std::uint64_t last = pos + k - 1;
      const auto lag_first =
          static_cast<std::int64_t>(r->at(pos, mask_).seq.load(std::memory_order_acquire) - pos);
      const auto lag_last =
          static_cast<std::int64_t>(r->at(last, mask_).seq.load(std::memory_order_acquire) - last);
      if (lag_first < 0 || lag_last < 0) return {claim_state::spill};
      if (lag_first == 0 && lag_last == 0) {
        if (tail_.compare_exchange_weak(pos, pos + k, std::memory_order_relaxed))
          return {claim_state::ring, r, pos};
      } else {
        pos = tail_.load(std::memory_order_relaxed);  // another producer claimed these
      }
    }
  }

  // Spilling: plain stores under the mutex, no read-modify-write on a line the consumer writes.
  template <class Put>
  bool spill(std::uint64_t k, Put&& put) {
    std::lock_guard lock(mutex_);
    if ((tail_.load(std::memory_order_relaxed) & closed_bit) != 0) return drop(k);
    put();
    spills_ += k;
    spilled_.store(overflow_.size(), std::memory_order_relaxed);
    if (!overflowing_.load(std::memory_order_relaxed)) overflowing_.store(true, std::memory_order_relaxed);
    return true;
  }

  static std::uint64_t round_up(std::size_t n) {
    std::uint64_t c = 2;
    while (c < n) c <<= 1;
    return c;
  }

  ring* install_ring() {
    const std::size_t capacity = mask_ + 1;
    void* mem = ::operator new (ring::bytes(capacity), std::align_val_t{ring::align});
    auto* fresh = new (mem) ring;
    for (std::size_t i = 0; i < capacity; ++i) {
      slot* s = new (&fresh->slots()[i]) slot;
      s->seq.store(i, std::memory_order_relaxed);
    }
    ring* expected = nullptr;
    if (ring_.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel, std::memory_order_acquire))
      return fresh;
    fresh->~ring();  // another producer installed one first
    ::operator delete (mem, ring::bytes(capacity), std::align_val_t{ring::align});
    return expected;
  }

  template <class... A>
  void fill(slot& s, std::uint64_t pos, A&&... args) {
    try {
      new (s.bytes) T(std::forward<A>(args)...);
      s.live = true;
    } catch (...) {
      s.live = false;  // publish a hole so the consumer does not wait for it forever
      s.seq.store(pos + 1, std::memory_order_release);
      throw;
    }
    s.seq.store(pos + 1, std::memory_order_release);
  }

  template <class F>
  popped pop(F& fn) {
    ring* r = ring_.load(std::memory_order_acquire);
    if (r == nullptr) return popped::empty;
    const std::uint64_t head = r->head.load(std::memory_order_relaxed);
    slot& s = r->at(head, mask_);
    if (s.seq.load(std::memory_order_acquire) != head + 1) {
      const std::uint64_t tail = tail_.load(std::memory_order_acquire) & ~closed_bit;
      return tail == head ? popped::empty : popped::busy;
    }
    if (!s.live) {
      free_slot(*r, s, head);
      return popped::hole;
    }
    struct release {  // after fn, even when it throws: destroy the event and free its slot
      inbox& box;
      ring& r;
      slot& s;
      std::uint64_t head;
      ~release() {
        s.value()->~T();
        box.free_slot(r, s, head);
      }
    } done{*this, *r, s, head};
    fn(*s.value());
    return popped::one;
  }

  // Takes the spilled events, unless the ring holds events again: a producer that filled the ring
  // after it looked empty and then spilled posted those ring events first. Under the mutex no
  // spill is under way, and every claim made before the last spill shows in the tail.
  bool take_spill() {
    std::lock_guard lock(mutex_);
    if (const ring* r = ring_.load(std::memory_order_acquire)) {
      const std::uint64_t tail = tail_.load(std::memory_order_acquire) & ~closed_bit;
      if (tail != r->head.load(std::memory_order_relaxed)) return false;
    }
    taken_.swap(overflow_);
    spilled_.store(0, std::memory_order_relaxed);
    overflowing_.store(false, std::memory_order_relaxed);
    return true;
  }

  void free_slot(ring& r, slot& s, std::uint64_t head) noexcept {
    s.seq.store(head + mask_ + 1, std::memory_order_release);
    r.head.store(head + 1, std::memory_order_relaxed);
  }

  bool drop(std::uint64_t n = 1) noexcept {
    dropped_.fetch_add(n, std::memory_order_relaxed);
    return false;
  }

  // Producers: the tail (bit 63 = closed), the ring pointer, the spill flag.
  std::atomic<std::uint64_t> tail_{0};
  std::atomic<ring*> ring_{nullptr};
  const std::uint64_t mask_;
  std::atomic<bool> overflowing_{false};
  std::atomic<std::size_t> spilled_{0};  // overflow_.size(), for depth()
  std::atomic<std::uint64_t> dropped_{0};
  mutable std::mutex mutex_;  // guards overflow_ and spills_
  std::vector<T> overflow_;
  std::uint64_t spills_ = 0;
  // Consumer only (taken_left_ is read by depth()).
  std::vector<T> taken_;
  std::size_t taken_pos_ = 0;
  std::atomic<std::size_t> taken_left_{0};
};

}  // namespace scenert
