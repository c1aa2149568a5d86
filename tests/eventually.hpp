#pragma once
// A test waits on what it means: a condition polled with a short period until a deadline.

#include <chrono>
#include <thread>

namespace scenert::test {

/// Polls `done` every `period` until it holds or `limit` passed; whether it held at the end.
template <class Pred>
bool eventually(Pred done, std::chrono::milliseconds limit = std::chrono::seconds(5),
                std::chrono::milliseconds period = std::chrono::milliseconds(5)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return done();
    std::this_thread::sleep_for(period);
  }
  return true;
}

}  // namespace scenert::test
