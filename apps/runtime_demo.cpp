// runtime_demo: a processor pool ticks a few services on the steady clock for about three
// seconds (a town, dungeons, a service that fails now and then, one that receives messages),
// then prints each service's metrics and the pool's as a table.
#include <scenert/runtime/processor_pool.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;

// Busy work standing in for a frame of game logic.
void work_for(std::chrono::nanoseconds d) {
  auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}

class demo_service final : public scenert::service {
 public:
  demo_service(std::string name, std::chrono::nanoseconds work, int fail_every = 0)
      : service(std::move(name)), work_(work), fail_every_(fail_every) {}
  int messages = 0;

 private:
  void on_tick(const scenert::tick_context& ctx) override {
    work_for(work_);
    if (fail_every_ != 0 && ctx.index % static_cast<std::uint64_t>(fail_every_) == 0)
      throw std::runtime_error("scripted failure");
  }
  std::chrono::nanoseconds work_;
  int fail_every_;
};

std::string us(std::chrono::nanoseconds d) {
  return fmt::format("{:.1f}", static_cast<double>(d.count()) / 1e3);
}

void print(const scenert::pool_metrics& m) {
  fmt::print("{:<12} {:>5} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>5} {:>5} {:>5}\n", "service", "hz",
             "ticks", "tick p50", "tick p99", "tick max", "late p50", "late p99", "late max", "over", "exc",
             "inbox");
  for (auto& s : m.per_service) {
    fmt::print("{:<12} {:>5.0f} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>5} {:>5} {:>5}\n", s.name, s.hz,
               s.ticks, us(s.tick_p50), us(s.tick_p99), us(s.tick_max), us(s.lateness_p50),
               us(s.lateness_p99), us(s.lateness_max), s.overruns, s.exceptions, s.mailbox_depth);
  }
  fmt::print(
      "(times in microseconds)\n\npool: {} workers, {} services, {} ticks, {} overruns, {} exceptions, "
      "{} stalls, utilisation {:.2f}%\n",
      m.workers, m.services, m.ticks, m.overruns, m.exceptions, m.stalls, m.utilisation * 100);
  fmt::print("pool tick duration p50 {} us, p99 {} us, max {} us; lateness p50 {} us, p99 {} us, max {} us\n",
             us(m.tick_duration.p50), us(m.tick_duration.p99), us(m.tick_duration.max), us(m.lateness.p50),
             us(m.lateness.p99), us(m.lateness.max));
}

}  // namespace

int main() {
  scenert::pool_options opts;
  opts.workers = 2;
  opts.quarantine_after = 0;  // the flaky service keeps running; its failures are counted
  opts.log = [](scenert::log_level, std::string_view) {};  // failures are expected; the table counts them
  scenert::processor_pool pool(opts);

  std::vector<std::shared_ptr<demo_service>> services{
      std::make_shared<demo_service>("town-1", 300us),   std::make_shared<demo_service>("field-1", 150us),
      std::make_shared<demo_service>("dungeon-1", 20us), std::make_shared<demo_service>("dungeon-2", 20us),
      std::make_shared<demo_service>("flaky", 5us, 7),   std::make_shared<demo_service>("inbox", 5us)};
  const double rates[] = {20, 20, 10, 10, 30, 50};
  for (std::size_t i = 0; i < services.size(); ++i) {
    if (auto r = pool.add(services[i], rates[i]); !r) {
      std::fprintf(stderr, "runtime_demo: %s\n", r.error().message.c_str());
      return 1;
    }
  }
  if (auto r = pool.start(); !r) {
    std::fprintf(stderr, "runtime_demo: %s\n", r.error().message.c_str());
    return 1;
  }
  std::fprintf(stderr, "runtime_demo: ticking %zu services on 2 workers for 3 s...\n", services.size());
  auto& inbox = *services.back();
  auto end = std::chrono::steady_clock::now() + 3s;
  while (std::chrono::steady_clock::now() < end) {
    (void)inbox.post([&inbox] { ++inbox.messages; });
    std::this_thread::sleep_for(5ms);
  }
  auto m = pool.metrics(true);
  (void)pool.stop();
  print(m);
  fmt::print("inbox ran {} messages, dropped {}\n", inbox.messages, inbox.dropped_messages());
  return 0;
}
