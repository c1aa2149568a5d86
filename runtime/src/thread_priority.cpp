#include "thread_priority.hpp"

#include <fmt/format.h>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>

#include <cstring>
#endif

namespace scenert::detail {

realtime_scope::realtime_scope(int priority) noexcept {
  if (priority == 0) return;
#if defined(__linux__)
  sched_param old{};
  if (pthread_getschedparam(pthread_self(), &old_policy_, &old) != 0) old_policy_ = SCHED_OTHER;
  old_priority_ = old.sched_priority;
  sched_param p{};
  p.sched_priority = priority;
  if (int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &p); rc != 0) {
    error_ = fmt::format("SCHED_FIFO priority {} refused: {} (needs CAP_SYS_NICE or an rtprio limit)",
                         priority, std::strerror(rc));
    return;
  }
  changed_ = true;
#else
  error_ = "real-time priority is supported on Linux only";
#endif
}

realtime_scope::~realtime_scope() {
#if defined(__linux__)
  if (!changed_) return;
  sched_param p{};
  p.sched_priority = old_priority_;
  (void)pthread_setschedparam(pthread_self(), old_policy_, &p);
#endif
}

}  // namespace scenert::detail
