#pragma once
// CPU seconds of this whole process (user + system, every thread's): the macro benches report CPU
// per unit of work, steadier than wall-clock rates on a small shared machine.
#include <sys/resource.h>

namespace scenert::bench {

inline double process_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return s(u.ru_utime) + s(u.ru_stime);
}

}  // namespace scenert::bench
