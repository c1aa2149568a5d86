#pragma once
/// store_queue: a player store's calls as values, waiting for the store's own thread in the order
/// they were made. Every player_store keeps one: its calls push, its thread takes what has queued up
/// a batch at a time, and once the store stops a call is answered `closed` on its caller's thread.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <iterator>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <scenert/scene/player_store.hpp>

namespace scenert {

/// player_store::sign_in, as a value.
struct store_sign_in {
  player_id player = 0;
  std::string owner;
  holdings_done done;
};
/// player_store::sign_out, as a value.
struct store_sign_out {
  player_id player = 0;
};
/// player_store::write, as a value.
struct store_write {
  grant g;
  grant_done done;
};
/// player_store::read, as a value.
struct store_read {
  std::string owner;
  holdings_done done;
};
/// One call to a player store.
using store_request = std::variant<store_sign_in, store_sign_out, store_write, store_read>;

/// Thread-safety: push() and stop() from any thread; take() from the store's own thread only.
class store_queue {
 public:
  using clock = std::chrono::steady_clock;

  /// Queues a call for the store's thread; once the store stopped, answers it `closed` here.
  void push(store_request r) {
    {
      std::lock_guard lock(m_);
      if (!stopping_) {
        calls_.push_back(std::move(r));
        wake_.notify_one();
        return;
      }
    }
    answer_closed(r);
  }

  /// Calls from now on are answered closed; take() hands over what was queued before, then ends.
  void stop() {
    std::lock_guard lock(m_);
    stopping_ = true;
    wake_.notify_one();
  }

  /// Waits for calls (until `until`, when given), then moves the first `most` (at least one) of
  /// them into `batch`, which it clears first. False once stopped with none left: the thread ends.
  bool take(std::vector<store_request>& batch, std::size_t most,
            std::optional<clock::time_point> until = {}) {
    batch.clear();
    std::unique_lock lock(m_);
    auto ready = [&] { return !calls_.empty() || stopping_; };
    if (until)
      wake_.wait_until(lock, *until, ready);
    else
      wake_.wait(lock, ready);
    if (calls_.empty()) return !stopping_;
    if (most == 0 || calls_.size() <= most) {
      batch.swap(calls_);
      return true;
    }
    const auto end = calls_.begin() + static_cast<std::ptrdiff_t>(most);
    batch.assign(std::make_move_iterator(calls_.begin()), std::make_move_iterator(end));
    calls_.erase(calls_.begin(), end);
    return true;
  }

 private:
  static void answer_closed(store_request& r) {
    const std::string why = "the player store has stopped";
    if (auto* in = std::get_if<store_sign_in>(&r); in != nullptr && in->done)
      in->done(holdings{std::move(in->owner), {}, store_errc::closed, why});
    else if (auto* w = std::get_if<store_write>(&r); w != nullptr && w->done)
      w->done(grant_receipt{std::move(w->g), store_errc::closed, false, why});
    else if (auto* rd = std::get_if<store_read>(&r); rd != nullptr && rd->done)
      rd->done(holdings{std::move(rd->owner), {}, store_errc::closed, why});
  }

  std::mutex m_;
  std::condition_variable wake_;
  std::vector<store_request> calls_;  // guarded by m_
  bool stopping_ = false;             // guarded by m_
};

}  // namespace scenert
