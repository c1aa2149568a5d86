#pragma once
/// inbox<T>: the one way threads hand work to a service. Many producers, one consumer that drains
/// a batch per tick, no allocation per event once warm, a close gate that loses nothing.

#include <scenert/runtime/assert.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
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
/// Lanes: a producer that posts all the time (an I/O thread) takes a lane of its own, a ring with
/// its own tail, so producers do not contend for one cache line (`inbox(capacity, lanes)`,
/// `on_lane(i)`). post() and friends use lane 0. Events of one lane come out in the order they
/// went in; the consumer visits the lanes in turn, so events of two lanes may interleave in any
/// order. A producer that moves between threads (a pool worker) keeps to one lane.
///
/// Each ring is allocated on its lane's first post: a million quiet services carry no slots.
///
/// Thread-safety: post(), emplace(), post_all(), on_lane(), depth(), empty(), dropped(), closed()
/// from any thread; drain(), close() and open() from the one consumer thread.
template <class T>
class inbox {
  struct lane_state;

 public:
  /// `ring_capacity` (per lane) is rounded up to a power of two (at least 2); `lanes` at least 1.
  explicit inbox(std::size_t ring_capacity = 256, std::size_t lanes = 1)
      : mask_(round_up(ring_capacity) - 1),
        lanes_(lanes > 1 ? lanes : 1),
        more_(lanes_ > 1 ? std::make_unique<padded_lane[]>(lanes_ - 1) : nullptr) {}
  inbox(const inbox&) = delete;
  inbox& operator=(const inbox&) = delete;
  ~inbox() {
    for (std::size_t i = 0; i < lanes_; ++i) {
      ring* r = lane_at(i).buffer.load(std::memory_order_acquire);
      if (r == nullptr) continue;
      for (std::uint64_t pos = r->head.load(std::memory_order_relaxed);; ++pos) {
        slot& s = r->at(pos, mask_);
        if (s.seq.load(std::memory_order_acquire) != pos + 1) break;
        if (s.live) s.value()->~T();
      }
      r->~ring();
      ::operator delete (static_cast<void*>(r), std::align_val_t{ring::align});
    }
  }

  /// A producer's handle on one lane: post(), emplace() and post_all() as the inbox's own.
  class lane {
   public:
    [[nodiscard]] bool post(T value) { return box_->emplace_on(*state_, std::move(value)); }
    template <class... A>
    [[nodiscard]] bool emplace(A&&... args) {
      return box_->emplace_on(*state_, std::forward<A>(args)...);
    }
    [[nodiscard]] bool post_all(std::span<const T> values) { return box_->post_all_on(*state_, values); }

   private:
    friend class inbox;
    lane(inbox* box, std::size_t i) : box_(box), state_(&box->lane_at(i)) {}
    inbox* box_;
    lane_state* state_;
  };
  /// Lane `i`, which must be below lanes().
  [[nodiscard]] lane on_lane(std::size_t i) {
    SCENERT_ASSERT(i < lanes_, "inbox::on_lane: no such lane");
    return lane(this, i);
  }
  [[nodiscard]] std::size_t lanes() const noexcept { return lanes_; }

  /// Queues `value` on lane 0; false (and counted as dropped) once closed.
  [[nodiscard]] bool post(T value) { return emplace_on(first_, std::move(value)); }

  /// Queues a T built from `args` in its slot on lane 0; false (and counted as dropped) once closed.
  template <class... A>
  [[nodiscard]] bool emplace(A&&... args) {
    return emplace_on(first_, std::forward<A>(args)...);
  }

  /// Queues copies of `values` on lane 0, in order, with one claim on the ring (or one lock when
  /// they spill): a producer that gathers a tick's events for one consumer hands them over at
  /// once. False (and each counted as dropped) once closed.
  [[nodiscard]] bool post_all(std::span<const T> values) { return post_all_on(first_, values); }

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
    std::size_t idle = 0;  // lanes in a row that had nothing to give
    bool busy = false;
    while (n < max) {
      if (taken_pos_ < taken_.size()) {  // a spilled batch goes first: it is older than the rings
        ++n;
        fn(taken_[taken_pos_++]);
        continue;
      }
      if (!taken_.empty()) {
        taken_.clear();
        taken_pos_ = 0;
      }
      if (idle < lanes_) {
        switch (pop(lane_at(cursor_), fn)) {
          case popped::one:
            ++n;
            idle = 0;
            continue;
          case popped::hole:
            idle = 0;
            continue;
          case popped::busy:
            busy = true;
            break;
          case popped::empty:
            break;
        }
        ++idle;
        if (++cursor_ == lanes_) cursor_ = 0;
        continue;
      }
      // Every lane is empty or waits for a producer mid-post; the spill is younger than both.
      if (busy || !overflowing_.load(std::memory_order_acquire)) return n;
      idle = 0;
      if (!take_spill()) continue;  // a ring filled meanwhile: its events are older
      if (taken_.empty()) return n;
    }
    return n;
  }

  /// Rejects later posts and waits until every post already past the gate has finished, so that
  /// a following drain sees all of them.
  void close() noexcept {
    for (std::size_t i = 0; i < lanes_; ++i) lane_at(i).tail.fetch_or(closed_bit, std::memory_order_acq_rel);
    { std::lock_guard lock(mutex_); }  // a spilling producer inside has finished
    for (std::size_t i = 0; i < lanes_; ++i) {
      lane_state& l = lane_at(i);
      ring* r = l.buffer.load(std::memory_order_acquire);
      if (r == nullptr) continue;
      const std::uint64_t end = l.tail.load(std::memory_order_acquire) & ~closed_bit;
      for (std::uint64_t pos = r->head.load(std::memory_order_relaxed); pos != end; ++pos) {
        for (unsigned spins = 0; r->at(pos, mask_).seq.load(std::memory_order_acquire) != pos + 1; ++spins) {
          if (spins > 64) std::this_thread::yield();
        }
      }
    }
  }
  /// Accepts posts again.
  void open() noexcept {
    for (std::size_t i = 0; i < lanes_; ++i)
      lane_at(i).tail.fetch_and(~closed_bit, std::memory_order_acq_rel);
  }

  [[nodiscard]] bool closed() const noexcept {
    return (first_.tail.load(std::memory_order_relaxed) & closed_bit) != 0;
  }
  /// Events queued and not yet run (a moment's view when producers are busy).
  [[nodiscard]] std::size_t depth() const noexcept {
    std::uint64_t in_rings = 0;
    for (std::size_t i = 0; i < lanes_; ++i) {
      const lane_state& l = lane_at(i);
      if (const ring* r = l.buffer.load(std::memory_order_acquire)) {
        const std::uint64_t tail = l.tail.load(std::memory_order_relaxed) & ~closed_bit;
        const std::uint64_t head = r->head.load(std::memory_order_relaxed);
        in_rings += tail > head ? tail - head : 0;
      }
    }
    return static_cast<std::size_t>(in_rings) + spilled_.load(std::memory_order_relaxed) +
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
    if (const ring* r = first_.buffer.load(std::memory_order_relaxed)) __builtin_prefetch(r);
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
  // A lane: its producers' tail (bit 63 = closed) and its ring, allocated on the first post.
  struct lane_state {
    std::atomic<std::uint64_t> tail{0};
    std::atomic<ring*> buffer{nullptr};
  };
  struct alignas(64) padded_lane : lane_state {};  // lanes past the first on lines of their own

  lane_state& lane_at(std::size_t i) noexcept { return i == 0 ? first_ : more_[i - 1]; }
  const lane_state& lane_at(std::size_t i) const noexcept { return i == 0 ? first_ : more_[i - 1]; }

  template <class... A>
  bool emplace_on(lane_state& l, A&&... args) {
    const claimed c = claim(l, 1);
    if (c.got == claim_state::closed) return drop();
    if (c.got == claim_state::ring) {
      fill(c.r->at(c.pos, mask_), c.pos, std::forward<A>(args)...);
      return true;
    }
    return spill(l, 1, [&] { overflow_.emplace_back(std::forward<A>(args)...); });
  }

  bool post_all_on(lane_state& l, std::span<const T> values) {
    if (values.empty()) return (l.tail.load(std::memory_order_relaxed) & closed_bit) == 0;
    const auto k = static_cast<std::uint64_t>(values.size());
    const claimed c = claim(l, k);
    if (c.got == claim_state::closed) return drop(k);
    if (c.got == claim_state::ring) {
      for (std::uint64_t i = 0; i < k; ++i) fill(c.r->at(c.pos + i, mask_), c.pos + i, values[i]);
      return true;
    }
    return spill(l, k, [&] { overflow_.insert(overflow_.end(), values.begin(), values.end()); });
  }

  enum class popped { one, hole, busy, empty };
  enum class claim_state { ring, spill, closed };
  struct claimed {
    claim_state got;
    ring* r = nullptr;
    std::uint64_t pos = 0;
  };

  // Claims k consecutive slots with one compare-and-swap on the tail; spill when the ring has not
  // room for all k, or while a spill is under way (so a producer's later events follow its earlier).
  claimed claim(lane_state& l, std::uint64_t k) {
    if (k > mask_ + 1 || overflowing_.load(std::memory_order_relaxed)) return {claim_state::spill};
    ring* r = l.buffer.load(std::memory_order_acquire);
    if (r == nullptr) r = install_ring(l);
    std::uint64_t pos = l.tail.load(std::memory_order_relaxed);
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
        if (l.tail.compare_exchange_weak(pos, pos + k, std::memory_order_relaxed))
          return {claim_state::ring, r, pos};
      } else {
        pos = l.tail.load(std::memory_order_relaxed);  // another producer claimed these
      }
    }
  }

  // Spilling: plain stores under the mutex, no read-modify-write on a line the consumer writes.
  template <class Put>
  bool spill(const lane_state& l, std::uint64_t k, Put&& put) {
    std::lock_guard lock(mutex_);
    if ((l.tail.load(std::memory_order_relaxed) & closed_bit) != 0) return drop(k);
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

  ring* install_ring(lane_state& l) {
    const std::size_t capacity = mask_ + 1;
    void* mem = ::operator new (ring::bytes(capacity), std::align_val_t{ring::align});
    auto* fresh = new (mem) ring;
    for (std::size_t i = 0; i < capacity; ++i) {
      slot* s = new (&fresh->slots()[i]) slot;
      s->seq.store(i, std::memory_order_relaxed);
    }
    ring* expected = nullptr;
    if (l.buffer.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel,
                                         std::memory_order_acquire))
      return fresh;
    fresh->~ring();  // another producer installed one first
    ::operator delete (mem, std::align_val_t{ring::align});
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
  popped pop(lane_state& l, F& fn) {
    ring* r = l.buffer.load(std::memory_order_acquire);
    if (r == nullptr) return popped::empty;
    const std::uint64_t head = r->head.load(std::memory_order_relaxed);
    slot& s = r->at(head, mask_);
    if (s.seq.load(std::memory_order_acquire) != head + 1) {
      const std::uint64_t tail = l.tail.load(std::memory_order_acquire) & ~closed_bit;
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

  // Takes the spilled events, unless a ring holds events again: a producer that filled its ring
  // after it looked empty and then spilled posted those ring events first. Under the mutex no
  // spill is under way, and every claim made before the last spill shows in its lane's tail.
  bool take_spill() {
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < lanes_; ++i) {
      const lane_state& l = lane_at(i);
      const ring* r = l.buffer.load(std::memory_order_acquire);
      if (r == nullptr) continue;
      const std::uint64_t tail = l.tail.load(std::memory_order_acquire) & ~closed_bit;
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

  // Producers: lane 0 inline, the others apart; the spill flag.
  lane_state first_;
  const std::uint64_t mask_;
  const std::size_t lanes_;
  std::unique_ptr<padded_lane[]> more_;
  std::atomic<bool> overflowing_{false};
  std::atomic<std::size_t> spilled_{0};  // overflow_.size(), for depth()
  std::atomic<std::uint64_t> dropped_{0};
  mutable std::mutex mutex_;  // guards overflow_ and spills_
  std::vector<T> overflow_;
  std::uint64_t spills_ = 0;
  // Consumer only (taken_left_ is read by depth()).
  std::vector<T> taken_;
  std::size_t taken_pos_ = 0;
  std::size_t cursor_ = 0;  // the lane drain() visits next
  std::atomic<std::size_t> taken_left_{0};
};

}  // namespace scenert
