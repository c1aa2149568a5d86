#include "shutdown_signal.hpp"

#include <signal.h>

#include <cerrno>
#include <ctime>

namespace scenert::apps {
namespace {
sigset_t shutdown_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}
}  // namespace

void block_shutdown_signals() {
  const sigset_t set = shutdown_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

bool wait_for_shutdown(std::chrono::milliseconds timeout) {
  const sigset_t set = shutdown_set();
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(secs.count());
  ts.tv_nsec = static_cast<long>(std::chrono::nanoseconds(timeout - secs).count());
  int sig;
  do {
    sig = sigtimedwait(&set, nullptr, &ts);
  } while (sig < 0 && errno == EINTR);
  return sig > 0;
}

}  // namespace scenert::apps
