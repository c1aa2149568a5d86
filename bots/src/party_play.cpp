// `scenert bots --play NAME`: the run (one thread, one event loop, every party's bots), its progress
// line and its report.
#include "party_bot.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <deque>

namespace scenert::bots {

namespace {

using play::clock;
using play::party_bot;
using play::party_state;
namespace asio = play::asio;

constexpr auto tick_period = std::chrono::milliseconds(10);

class play_run {
 public:
  explicit play_run(const party_play_options& o) : o_(o), shared_{o, report_} {
    report_.target = fmt::format("{}:{}", o.target.host, o.target.port);
    report_.script = o.script_name, report_.scene = o.scene, report_.parties = o.parties;
    report_.party_size = o.party_size, report_.seed = o.seed;
    for (std::uint32_t p = 0; p < o.parties; ++p) {
      // The party's id on the wire: the seed's own range, so that two runs' parties never meet.
      parties_.push_back({p, (o.seed << 20) + p + 1, {}, {}, {}, {}, 0, false});
      for (std::uint32_t m = 0; m < o.party_size; ++m)
        bots_.push_back(std::make_unique<party_bot>(io_, shared_, parties_.back(), m));
    }
  }

  party_play_report run() {
    start_ = clock::now();
    deadline_ = start_ + o_.deadline;
    next_progress_ = start_ + std::chrono::seconds(1);
    for (auto& b : bots_) b->start();
    tick();
    io_.run();
    return finish();
  }

 private:
  void tick() {
    const auto now = clock::now();
    for (auto& b : bots_) b->tick(now);
    if (now >= next_progress_) {
      progress(now);
      next_progress_ += std::chrono::seconds(1);
    }
    if (over()) return;
    if (now >= deadline_) return time_out();
    timer_.expires_at(now + tick_period);
    timer_.async_wait([this](boost::system::error_code ec) {
      if (!ec) tick();
    });
  }

  [[nodiscard]] bool over() const {
    return std::all_of(bots_.begin(), bots_.end(), [](const auto& b) {
      return b->at() == party_bot::stage::through || b->at() == party_bot::stage::failed;
    });
  }

  // The parties not through by the deadline failed, each named with where its members stood.
  void time_out() {
    for (auto& p : parties_) {
      if (p.failed || p.through == o_.party_size) continue;
      std::string stages;
      bool unheard = false;  // logged in, yet no 1014: a server without a player store sends none
      for (std::uint32_t m = 0; m < o_.party_size; ++m) {
        const auto at = bots_[p.index * o_.party_size + m]->at();
        unheard = unheard || at == party_bot::stage::logging_in;
        stages += fmt::format("{}{}", m == 0 ? "" : ",", stage_name(at));
      }
      shared_.fail(p,
                   fmt::format("not through within {} s (members: {}; phases seen {}, kills {}, chests {}){}",
                               std::chrono::duration<double>(o_.deadline).count(), stages, phases_text(p),
                               p.kills.size(), p.chests.size(),
                               unheard ? "; a member logging in heard no inventory (1014): does the server "
                                         "keep a player store (--store)?"
                                       : ""));
    }
    for (auto& b : bots_) b->stop();
    io_.stop();
  }

  static const char* stage_name(party_bot::stage s) {
    constexpr const char* names[] = {"connecting", "logging_in", "entering", "playing",
                                     "looting",    "relogging",  "through",  "failed"};
    return names[static_cast<std::size_t>(s)];
  }

  static std::string phases_text(const party_state& p) {
    std::string out;
    for (const auto ph : p.phases.order) out += fmt::format("{}{}", out.empty() ? "" : ",", ph);
    return out.empty() ? "none" : out;
  }

  void progress(clock::time_point now) {
    if (!o_.progress) return;
    std::uint32_t through = 0;
    for (const auto& p : parties_) through += p.through == o_.party_size ? 1 : 0;
    std::size_t kills = 0;
    for (const auto& p : parties_) kills += p.kills.size();
    fmt::print(stderr, "play {:5.1f}s  parties through {}/{}  failed {}  kills {}  module messages {}\n",
               std::chrono::duration<double>(now - start_).count(), through, o_.parties,
               report_.parties_failed, kills, report_.module_messages);
  }

  party_play_report finish() {
    report_.wall_seconds = std::chrono::duration<double>(clock::now() - start_).count();
    for (const auto& p : parties_) {
      report_.kills += p.kills.size();
      report_.chests_opened += p.chests.size();
      ++report_.phase_orders[phases_text(p)];
      const auto& seen = p.phases.order;
      bool rising = !seen.empty();
      for (std::size_t i = 1; i < seen.size(); ++i) rising = rising && seen[i] == seen[i - 1] + 1;
      report_.phases_in_order += rising ? 1 : 0;
      if (!p.failed && p.through == o_.party_size) ++report_.parties_through;
    }
    return std::move(report_);
  }

  const party_play_options& o_;
  party_play_report report_;
  play::play_shared shared_;
  asio::io_context io_{1};
  asio::steady_timer timer_{io_};
  std::deque<party_state> parties_;               // stable addresses: bots hold theirs
  std::vector<std::unique_ptr<party_bot>> bots_;  // after io_: their sockets close before it goes
  clock::time_point start_, deadline_, next_progress_;
};

}  // namespace

party_play_report run_party_play(const party_play_options& o) { return play_run(o).run(); }

std::string party_play_text(const party_play_report& r) {
  std::string out = fmt::format("play {} against {}, scene {}: {} parties of {} (seed {}) in {:.1f} s\n",
                                r.script, r.target, r.scene, r.parties, r.party_size, r.seed, r.wall_seconds);
  out += fmt::format("  parties through    {} (failed {})\n", r.parties_through, r.parties_failed);
  out += fmt::format("  kills              {}\n  chests opened      {}\n", r.kills, r.chests_opened);
  out += fmt::format("  phases in order    {} parties\n", r.phases_in_order);
  for (const auto& [order, n] : r.phase_orders)
    out += fmt::format("    phases {:<12} {} parties\n", order, n);
  out += fmt::format("  items granted      {} (in {} grants)\n", r.items_granted, r.grants);
  out += fmt::format("  found after login  {} (missing {})\n", r.items_found, r.items_missing);
  out += fmt::format("  module messages    {}", r.module_messages);
  for (const auto& [code, n] : r.refused) out += fmt::format(", {} {}", code, n);
  out += "\n";
  if (r.fight.total() != 0)
    out += fmt::format("  fight (entry to chest) p50 {:.2f} s, max {:.2f} s\n",
                       static_cast<double>(r.fight.quantile(0.5)) / 1e9,
                       static_cast<double>(r.fight.max()) / 1e9);
  out += fmt::format("  errors             {}\n", r.errors);
  for (const auto& e : r.error_examples) out += fmt::format("    {}\n", e);
  return out;
}

std::string party_play_json(const party_play_report& r) {
  nlohmann::json j;
  j["target"] = r.target, j["script"] = r.script, j["scene"] = r.scene;
  j["parties"] = r.parties, j["party_size"] = r.party_size, j["seed"] = r.seed;
  j["wall_seconds"] = r.wall_seconds;
  j["parties_through"] = r.parties_through, j["parties_failed"] = r.parties_failed;
  j["kills"] = r.kills, j["chests_opened"] = r.chests_opened;
  j["phase_orders"] = r.phase_orders, j["phases_in_order"] = r.phases_in_order;
  j["grants"] = r.grants, j["items_granted"] = r.items_granted;
  j["items_found"] = r.items_found, j["items_missing"] = r.items_missing;
  j["module_messages"] = r.module_messages, j["refused"] = r.refused;
  j["fight_p50_s"] = static_cast<double>(r.fight.quantile(0.5)) / 1e9;
  j["fight_max_s"] = static_cast<double>(r.fight.max()) / 1e9;
  j["errors"] = r.errors, j["error_examples"] = r.error_examples;
  return j.dump(2);
}

}  // namespace scenert::bots
