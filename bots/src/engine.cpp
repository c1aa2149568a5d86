// The run of `scenert bots`: its threads, the progress line, the view checks and the merged report.
#include <scenert/bots/engine.hpp>

#include <scenert/bots/worker.hpp>

#include "hostile_crew.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <thread>
#include <unordered_map>
#include <unordered_set>

namespace scenert::bots {
namespace {

using bots::clock;

// A check that disagrees while the server's views still change is taken again, this many times in all.
constexpr int max_check_attempts = 3;
// How often a run asks whether it is to end early.
constexpr auto stop_poll = std::chrono::milliseconds(100);

class bots_run {
 public:
  // The hostile bots go to a crew of their own; the others are dealt to the workers in turn.
  bots_run(const bots_options& o, const bots_plan& plan) : o_(o), plan_(plan), shared_(o, plan) {
    const auto threads = static_cast<unsigned>(
        std::clamp<std::size_t>(o.threads, 1, std::max<std::size_t>(plan.bots.size(), 1)));
    for (unsigned i = 0; i < threads; ++i) workers_.push_back(std::make_unique<bots::worker>(shared_, i));
    const auto picks = pick_hostile(plan, o.hostile);
    std::uint32_t dealt = 0;
    for (std::uint32_t i = 0; i < plan.bots.size(); ++i)
      if (!picks[i]) workers_[dealt++ % threads]->add(i);
    report_.well_behaved = dealt;
    crew_ = std::make_unique<hostile_crew>(shared_, picks, o.hostile);
  }

  bots_report run() {
    shared_.start = clock::now();
    const double cpu_at_start = process_cpu_seconds();
    for (auto& w : workers_) threads_.emplace_back([&w] { w->run(); });
    crew_->start();
    const auto end = shared_.start + plan_.length;
    auto checkpoints = checkpoint_times();
    auto next_progress = shared_.start + std::chrono::seconds(1);
    for (auto now = clock::now(); now < end; now = clock::now()) {
      if (o_.stop_early && o_.stop_early()) {
        report_.ended_early = true;
        break;
      }
      auto until = std::min({end, next_progress, now + stop_poll});
      if (!checkpoints.empty()) until = std::min(until, checkpoints.front());
      std::this_thread::sleep_until(until);
      now = clock::now();
      if (!checkpoints.empty() && now >= checkpoints.front()) {
        checkpoints.erase(checkpoints.begin());
        if (auto c = check_views()) report_.checkpoints.push_back(std::move(*c));
        shared_.paused = false;
      }
      if (now >= next_progress) {
        progress(now);
        next_progress += std::chrono::seconds(1);
      }
    }
    shared_.paused = true;              // the end: nobody moves any more
    report_.hostile = crew_->finish();  // before the last check: their players settle too
    if (!o_.admins.empty())
      if (auto c = check_views()) {
        report_.views = std::move(*c);
        report_.views_verified = true;
      }
    report_.wall_seconds = std::chrono::duration<double>(clock::now() - shared_.start).count();
    for (auto& w : workers_) w->stop();
    for (auto& t : threads_) t.join();
    report_.own.cpu_seconds = process_cpu_seconds() - cpu_at_start;
    report_.own.wall_seconds = report_.wall_seconds;
    report_.own.cores = allowed_cores();
    return merged();
  }

 private:
  // Seeded from the plan, inside the run's middle, so arrivals have settled and bots still play.
  std::vector<clock::time_point> checkpoint_times() const {
    std::vector<clock::time_point> at;
    if (o_.admins.empty() || o_.checkpoints == 0) return at;
    std::mt19937_64 rng(plan_.digest);
    std::uniform_real_distribution<double> when(0.3, 0.9);
    for (std::uint32_t i = 0; i < o_.checkpoints; ++i)
      at.push_back(shared_.start + std::chrono::duration_cast<clock::duration>(plan_.length * when(rng)));
    std::sort(at.begin(), at.end());
    return at;
  }

  // Pauses the bots, lets the server settle, reads its truth and compares every bot's view with it.
  // The server may still change a view of its own while the bots stand still (a player whose node
  // died placed again once its request timed out, a dropped player's resume_ms running out): a check
  // that disagrees is kept only if no view frame came since the truth was read (nor within the next
  // quiet spell); else it is taken again. The last attempt leaves out the players whose views
  // changed while it read the truth: line by line, the truth may hold either side of such a change.
  std::optional<view_check> check_views() {
    shared_.paused = true;
    wait_until_placed();
    for (int attempt = 1;; ++attempt) {
      wait_until_quiet();
      const auto frames = shared_.view_frames.load();
      note_changes(true);
      auto truth = read_truth(o_.admins, std::chrono::seconds(10));
      if (!truth) {
        note_changes(false);
        ++report_.errors;
        report_.error_examples.push_back("views not checked: " + truth.error().message);
        return std::nullopt;
      }
      auto check = compare_with(*truth, attempt == max_check_attempts);
      if (check.mismatches() == 0 || attempt == max_check_attempts) return check;
      wait_until_quiet();  // the frames of a change the truth already holds may be on their way
      if (shared_.view_frames.load() == frames) return check;
    }
  }

  void note_changes(bool on) {
    std::lock_guard lock(shared_.changed_m);
    shared_.changed.clear();
    shared_.noting_changes = on;
  }

  // Every bot's view against the server's truth; the players whose views changed since the truth's
  // read began left out when asked.
  view_check compare_with(std::vector<true_view>& truth, bool leave_out_changes) {
    std::vector<bot_view> views;
    std::unordered_set<std::int32_t> transit;
    bool unanswered = false;
    for (auto& w : workers_) {
      auto part = w->call([&w] { return w->views(); });
      views.insert(views.end(), std::make_move_iterator(part.views.begin()),
                   std::make_move_iterator(part.views.end()));
      transit.insert(part.in_transit.begin(), part.in_transit.end());
      unanswered = unanswered || part.logins_unanswered;
    }
    std::unordered_set<std::int32_t> changed;
    {
      std::lock_guard lock(shared_.changed_m);
      changed.swap(shared_.changed);
      shared_.noting_changes = false;
    }
    leave_out_transit(truth, views, transit, unanswered);
    const std::uint64_t left_out = leave_out_changes ? leave_out_changed(truth, views, changed) : 0;
    place_unknowing_bots(truth, views);
    view_check check = compare_views(truth, views);
    check.changed = left_out;
    return check;
  }

  // Players in transit are left out of the truth and of every view. With a login still unanswered,
  // so are the players no bot knows yet (one of them may be that bot's).
  void leave_out_transit(std::vector<true_view>& truth, std::vector<bot_view>& views,
                         const std::unordered_set<std::int32_t>& transit, bool unanswered) const {
    auto out = [&](std::int32_t pid) {
      return transit.count(pid) != 0 || (unanswered && shared_.bot_of.find(pid) == shared_.bot_of.end());
    };
    for (auto& t : truth) std::erase_if(t.players, [&](const true_player& p) { return out(p.pid); });
    for (auto& v : views) std::erase_if(v.seen, [&](const seen_player& p) { return out(p.pid); });
  }

  // A bot between places (its request unanswered, its resume or login under way) is left out of a
  // check: a check waits for every bot to stand somewhere, up to 20 s (a request whose node stopped
  // is settled by its gateway sooner), so that each is checked where it ends. One still between
  // places then is an error: its player was not accounted for.
  void wait_until_placed() {
    const auto give_up = clock::now() + std::chrono::seconds(20);
    std::vector<std::int32_t> between;
    for (;;) {
      between.clear();
      for (auto& w : workers_) {
        auto part = w->call([&w] { return w->views(); });
        between.insert(between.end(), part.in_transit.begin(), part.in_transit.end());
      }
      if (between.empty()) return;
      if (clock::now() >= give_up) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    report_.errors += between.size();
    report_.error_examples.push_back(
        fmt::format("views checked with {} players still between places after 20 s (a request unanswered, a "
                    "resume or a login under way): {}",
                    between.size(), fmt::join(between, ", ")));
  }

  // The server has caught up once no frame that changes a view arrived for `settle` (a slow or
  // loaded server takes longer than two ticks); a minute at most.
  void wait_until_quiet() const {
    const auto give_up = clock::now() + std::chrono::minutes(1);
    auto last = shared_.view_frames.load();
    auto quiet_since = clock::now();
    while (clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const auto now_seen = shared_.view_frames.load();
      if (now_seen != last) {
        last = now_seen;
        quiet_since = clock::now();
      } else if (clock::now() - quiet_since >= o_.settle) {
        return;
      }
    }
  }

  // seed002 bots are never told their line: the server's truth says which one they are on.
  static void place_unknowing_bots(const std::vector<true_view>& truth, std::vector<bot_view>& views) {
    std::unordered_map<std::int32_t, const true_view*> line_of;
    for (const auto& v : truth)
      for (const auto& p : v.players) line_of[p.pid] = &v;
    for (auto& b : views) {
      if (b.scene != 0) continue;
      if (auto it = line_of.find(b.pid); it != line_of.end())
        b.scene = it->second->scene, b.line = it->second->line, b.phase = it->second->phase;
    }
  }

  void progress(clock::time_point now) {
    if (!o_.progress) return;
    latency_histogram moves;
    for (auto& w : workers_) moves.merge(w->call([&w]() -> latency_histogram { return w->deliveries(); }));
    const auto load = [](const std::atomic<std::uint64_t>& c) { return c.load(std::memory_order_relaxed); };
    const std::uint64_t m = load(shared_.moves), in = load(shared_.frames_in), out = load(shared_.frames_out);
    fmt::print(
        stderr,
        "bots {:5.1f}s  online {:>6}  moves/s {:>7}  frames/s in {:>8} out {:>7}  move p99 {:6.1f} ms  "
        "errors {}\n",
        std::chrono::duration<double>(now - shared_.start).count(), load(shared_.online), m - last_moves_,
        in - last_in_, out - last_out_, static_cast<double>(moves.quantile(0.99)) / 1e6,
        load(shared_.errors));
    last_moves_ = m, last_in_ = in, last_out_ = out;
  }

  bots_report merged() {
    bots_report& r = report_;
    r.threads = static_cast<unsigned>(workers_.size());
    r.plan_digest = plan_.digest;
    r.max_online = shared_.max_online.load();
    for (auto& w : workers_) add(r, w->stats());
    return std::move(r);
  }

  static void add(bots_report& r, const bots_report& p) {
    r.connected += p.connected, r.connect_failed += p.connect_failed, r.logged_in += p.logged_in;
    r.connect.merge(p.connect), r.login.merge(p.login);
    r.resumed += p.resumed, r.resume.merge(p.resume), r.server_busy += p.server_busy;
    r.busy_gave_up += p.busy_gave_up;
    for (const auto& [k, v] : p.failed_resumes) r.failed_resumes[k] += v;
    r.move_to_viewer.merge(p.move_to_viewer), r.heartbeat_rtt.merge(p.heartbeat_rtt);
    for (const auto& [k, v] : p.disconnects) r.disconnects[k] += v;
    for (const auto& [k, v] : p.moves_refused) r.moves_refused[k] += v;
    for (const auto& [k, h] : p.request_rtt) r.request_rtt[k].merge(h);
    r.request_samples.insert(r.request_samples.end(), p.request_samples.begin(), p.request_samples.end());
    for (const auto& [k, codes] : p.answers)
      for (const auto& [code, n] : codes) r.answers[k][code] += n;
    for (std::size_t i = 0; i < r.wire.size(); ++i) {
      r.wire[i].frames_in += p.wire[i].frames_in, r.wire[i].bytes_in += p.wire[i].bytes_in;
      r.wire[i].frames_out += p.wire[i].frames_out, r.wire[i].bytes_out += p.wire[i].bytes_out;
    }
    r.moves_sent += p.moves_sent, r.chats_sent += p.chats_sent, r.unknown_frames += p.unknown_frames;
    r.untimed_deliveries += p.untimed_deliveries;
    r.errors += p.errors;
    r.own.merge(p.own);
    for (const auto& e : p.error_examples)
      if (r.error_examples.size() < 10) r.error_examples.push_back(e);
  }

  const bots_options& o_;
  const bots_plan& plan_;
  bots::shared_state shared_;
  std::vector<std::unique_ptr<bots::worker>> workers_;
  std::vector<std::thread> threads_;
  std::unique_ptr<hostile_crew> crew_;
  bots_report report_;
  std::uint64_t last_moves_ = 0, last_in_ = 0, last_out_ = 0;
};

}  // namespace

bots_report run_bots(const bots_options& o, const bots_plan& plan) { return bots_run(o, plan).run(); }

}  // namespace scenert::bots
