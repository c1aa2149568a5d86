#include <scenert/bots/plan.hpp>

#include <algorithm>
#include <cmath>
#include <random>

namespace scenert::bots {
namespace {

std::chrono::nanoseconds at_seconds(double s) {
  return std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(s * 1e9)));
}

// Poisson-spaced times in [from, to): the gaps are exponential with the given mean.
template <class F>
void every(std::mt19937_64& rng, double mean, double from, double to, F&& fn) {
  if (mean <= 0) return;
  std::exponential_distribution<double> gap(1.0 / mean);
  for (double t = from + gap(rng); t < to; t += gap(rng)) fn(t);
}

class planner {
 public:
  explicit planner(const bots_plan_options& o) : o_(o), rng_(o.seed) {}

  bots_plan run() {
    bots_plan plan;
    plan.rate = o_.rate > 0 ? o_.rate : o_.clients / std::max(o_.seconds / 4, 1e-3);
    plan.length = at_seconds(o_.seconds);
    plan.bots.resize(o_.clients);
    const std::uint32_t party = std::max<std::uint32_t>(o_.party_size, 1);
    for (std::uint32_t i = 0; i < o_.clients; ++i) plan_bot(plan.bots[i], i, i - i % party, plan.rate);
    share_dungeon_runs(plan.bots, party);
    plan.digest = digest(plan);
    return plan;
  }

 private:
  void plan_bot(bot_plan& b, std::uint32_t i, std::uint32_t leader, double rate) {
    const double arrive = i / rate;
    double leave = o_.seconds;
    if (o_.session_seconds > 0)
      leave = std::min(leave, arrive + std::exponential_distribution<double>(1.0 / o_.session_seconds)(rng_));
    b.arrive = at_seconds(arrive);
    b.leave = at_seconds(std::max(leave, arrive));
    b.seed = rng_();
    b.leader = leader;
    every(rng_, o_.chat_every, arrive, leave, [&](double t) {
      b.steps.push_back({at_seconds(t), bot_action::chat});
    });
    const bool any = std::any_of(o_.mix.begin() + 1, o_.mix.end(), [](double w) { return w > 0; });
    if (!any) return sort_steps(b);
    std::discrete_distribution<int> kind(o_.mix.begin() + 1, o_.mix.end());
    every(rng_, o_.act_every, arrive, leave, [&](double t) {
      auto what = static_cast<bot_action>(kind(rng_) + 1);
      // A dungeon run is the leader's to start: members come along (share_dungeon_runs).
      if (what == bot_action::enter_dungeon && leader != i) what = bot_action::join_team;
      b.steps.push_back({at_seconds(t), what, static_cast<std::uint32_t>(rng_() >> 32)});
    });
    sort_steps(b);
  }

  static void sort_steps(bot_plan& b) {
    std::stable_sort(b.steps.begin(), b.steps.end(),
                     [](const bot_step& x, const bot_step& y) { return x.at < y.at; });
  }

  // Each leader's dungeon run gets a party id, and the members still online then take the same
  // step a little later (the leader's instance is opened by then).
  static void share_dungeon_runs(std::vector<bot_plan>& bots, std::uint32_t party) {
    for (std::uint32_t leader = 0; leader < bots.size(); leader += party) {
      std::uint64_t run = 0;
      std::vector<bot_step> runs;
      for (auto& s : bots[leader].steps)
        if (s.what == bot_action::enter_dungeon) {
          s.party = (std::uint64_t{leader + 1} << 24) | ++run;
          runs.push_back(s);
        }
      for (std::uint32_t m = leader + 1; m < std::min<std::size_t>(leader + party, bots.size()); ++m) {
        auto& member = bots[m];
        for (bot_step s : runs) {
          s.at += std::chrono::milliseconds(100) * (m - leader);
          if (s.at >= member.arrive && s.at < member.leave) member.steps.push_back(s);
        }
        sort_steps(member);
      }
    }
  }

  static std::uint64_t digest(const bots_plan& plan) {
    std::uint64_t d = 1469598103934665603ull;
    auto mix = [&](std::uint64_t v) { d = (d ^ v) * 1099511628211ull; };
    for (const auto& b : plan.bots) {
      mix(static_cast<std::uint64_t>(b.arrive.count()));
      mix(static_cast<std::uint64_t>(b.leave.count()));
      mix(b.seed);
      mix(b.leader);
      for (const auto& s : b.steps) {
        mix(static_cast<std::uint64_t>(s.at.count()));
        mix(static_cast<std::uint64_t>(s.what));
        mix(s.pick);
        mix(s.party);
      }
    }
    return d;
  }

  bots_plan_options o_;
  std::mt19937_64 rng_;
};

}  // namespace

bots_plan make_bots_plan(const bots_plan_options& o) { return planner(o).run(); }

}  // namespace scenert::bots
