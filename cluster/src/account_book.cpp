#include "account_book.hpp"

#include <algorithm>
#include <climits>

#include <fmt/format.h>

namespace scenert::cluster::detail {
namespace {

using steady = std::chrono::steady_clock;

// A lost race means another store wrote the account meanwhile: it made progress, so trying again
// at once is right; this many losses in a row is a fault, not contention.
constexpr int write_tries = 64;
constexpr std::size_t max_known_accounts = 16'384;
// New grants one write applies to an account at most: its record stays far below the server's
// largest message (1 MiB by default) even with a batch of long ids to one account.
constexpr std::size_t max_new_per_write = 512;

std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

error<store_errc> io(const error<cluster_errc>& e) { return {store_errc::io, e.message}; }

void bump_max(std::atomic<std::uint64_t>& max, std::uint64_t v) {
  std::uint64_t seen = max.load(std::memory_order_relaxed);
  while (v > seen && !max.compare_exchange_weak(seen, v, std::memory_order_relaxed)) {
  }
}

void add(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) { c.fetch_add(n, std::memory_order_relaxed); }

void fail_all(std::vector<pending_grant*>& grants, const error<store_errc>& e) {
  for (auto* g : grants) {
    if (g->decided) continue;
    g->decided = true;
    g->receipt.code = e.code, g->receipt.reason = e.message;
  }
}

void settle(std::vector<pending_grant*>& grants, const std::vector<bool>& applies, std::size_t examined) {
  for (std::size_t i = 0; i < examined; ++i) {
    if (grants[i]->decided) continue;
    grants[i]->decided = true;
    grants[i]->receipt.repeated = !applies[i];
  }
}

}  // namespace

// ---- players -----------------------------------------------------------------------------

// What this store knows of the player, read again once older than player_ttl.
result<account_book::known_player*, store_errc> account_book::player(player_id p) {
  const auto now = steady::now();
  auto it = players_.find(p);
  if (it != players_.end() && now - it->second.read_at <= o_.player_ttl) return &it->second;
  auto got = bucket_.get(player_key(p));
  if (!got && got.code() == cluster_errc::not_found) {
    players_.erase(p);
    return fail(store_errc::no_account, fmt::format("player {} has no account in the store (a guest?)", p));
  }
  if (!got) return io(got.error());
  auto rec = decode_player(got->value);
  if (!rec)
    return fail(store_errc::io,
                fmt::format("bucket '{}' key '{}': {}", bucket_.name(), player_key(p), rec.error().message));
  return &players_.insert_or_assign(p, known_player{std::move(*rec), got->revision, now}).first->second;
}

result<std::string, store_errc> account_book::owner_of(player_id p) {
  auto known = player(p);
  if (!known) return known.error();
  const auto& rec = (*known)->rec;
  if (rec.gone_ms != 0 && wall_ms() - rec.gone_ms > o_.account_grace.count())
    return fail(store_errc::no_account, fmt::format("player {} signed out {} ms ago (the grace is {} ms)", p,
                                                    wall_ms() - rec.gone_ms, o_.account_grace.count()));
  return rec.owner;
}

// The latest sign-in wins: a plain write, whoever wrote the record before.
holdings account_book::sign_in(player_id p, std::string owner) {
  player_record rec{owner, 0};
  auto put = bucket_.put(player_key(p), encode(rec));
  if (!put) {
    players_.erase(p);
    add(n_.reads);
    return {std::move(owner), {}, store_errc::io, put.error().message};
  }
  known_player mine{std::move(rec), *put, steady::now()};
  signed_in_.insert_or_assign(p, mine);
  players_.insert_or_assign(p, std::move(mine));
  return read(std::move(owner));
}

// At the revision of this store's sign-in: a sign-in elsewhere since (a player resumed through
// another gateway) is left as it is.
void account_book::sign_out(player_id p) {
  auto mine = signed_in_.find(p);
  if (mine == signed_in_.end()) return;
  player_record gone{std::move(mine->second.rec.owner), wall_ms()};
  const std::uint64_t revision = mine->second.revision;
  signed_in_.erase(mine);
  auto wrote = bucket_.update(player_key(p), encode(gone), revision);
  if (!wrote) {
    players_.erase(p);
    return;
  }
  const auto now = steady::now();
  players_.insert_or_assign(p, known_player{std::move(gone), *wrote, now});
  gone_.push_back({now + o_.account_grace, p, *wrote});
}

std::optional<steady::time_point> account_book::next_erase() const {
  if (gone_.empty()) return std::nullopt;
  return gone_.front().due;
}

// A player's record goes once its grace is over, unless it was written again meanwhile. One that
// cannot go now (the server away) stays: the next sign-out of its id replaces it.
void account_book::erase_due() {
  const auto now = steady::now();
  while (!gone_.empty() && gone_.front().due <= now) {
    const gone_player g = gone_.front();
    gone_.pop_front();
    (void)bucket_.erase_at(player_key(g.player), g.revision);
    if (auto it = players_.find(g.player); it != players_.end() && it->second.revision == g.revision)
      players_.erase(it);
    add(n_.expired);
  }
  prune_players();
}

void account_book::prune_players() {
  const auto now = steady::now();
  if (now - pruned_ < o_.player_ttl) return;
  pruned_ = now;
  std::erase_if(players_, [&](const auto& p) { return now - p.second.read_at > o_.player_ttl; });
}

// ---- accounts ----------------------------------------------------------------------------

void account_book::remember(const std::string& key, known_account a) {
  if (accounts_.size() >= max_known_accounts && !accounts_.contains(key)) accounts_.clear();
  accounts_.insert_or_assign(key, std::move(a));
}

result<account_book::known_account, store_errc> account_book::load(const std::string& key, bool fresh) {
  if (!fresh)
    if (auto it = accounts_.find(key); it != accounts_.end()) return it->second;
  auto got = bucket_.get(key);
  if (!got && got.code() == cluster_errc::not_found) {
    remember(key, {});
    return known_account{};
  }
  if (!got) return io(got.error());
  auto rec = decode_account(got->value);
  if (!rec)
    return fail(store_errc::io,
                fmt::format("bucket '{}' key '{}': {}", bucket_.name(), key, rec.error().message));
  known_account a{std::move(*rec), got->revision};
  remember(key, a);
  return a;
}

holdings account_book::read(std::string owner) {
  add(n_.reads);
  auto a = load(account_key(owner), true);
  if (!a) return {std::move(owner), {}, a.code(), a.error().message};
  return {std::move(owner), holdings_of(a->rec), store_errc::ok, {}};
}

result<bool, store_errc> account_book::spent(const std::string& id) {
  if (spent_seen_.contains(id)) return true;
  add(n_.spent_reads);
  auto got = bucket_.get(spent_key(id));
  if (got) {
    spent_seen_.insert(id);
    return true;
  }
  if (got.code() == cluster_errc::not_found) return false;
  return io(got.error());
}

// Which of the grants the account at `now` has not applied yet, and the record with them applied.
result<account_book::round, store_errc> account_book::decide(const known_account& now,
                                                             std::vector<pending_grant*>& grants) {
  round r{now.rec, std::vector<bool>(grants.size(), false), 0};
  const std::size_t prior = r.next.recent.size();
  std::unordered_set<std::string> ids(r.next.recent.begin(), r.next.recent.end());
  for (std::size_t i = 0; i < grants.size() && r.applied < max_new_per_write; ++i) {
    r.examined = i + 1;
    pending_grant& g = *grants[i];
    if (g.decided || ids.contains(g.id)) continue;
    if (r.next.spent > 0 && may_be_spent(r.next.spent_filter, g.id)) {
      auto was = spent(g.id);
      if (!was) return was.error();
      if (*was) continue;
    }
    const auto& what = g.receipt.what;
    auto held = r.next.items.find(what.item);
    if (held != r.next.items.end() && held->second > INT64_MAX - what.count) {
      g.decided = true;
      g.receipt.code = store_errc::bad_grant;
      g.receipt.reason =
          fmt::format("{} more of item {} would overflow the {} held", what.count, what.item, held->second);
      continue;
    }
    r.next.items[what.item] += what.count;
    ids.insert(g.id);
    r.next.recent.push_back(g.id);
    r.applies[i] = true;
    ++r.applied;
  }
  if (r.applied > 0)
    if (auto gone = let_go(r, prior); !gone) return gone.error();
  return r;
}

// Past recent_grants, the oldest ids the record held before this round leave it, each after its
// mark is written: an id is always in the record or marked. An id of this round never leaves in it
// (its write may still fail, and a mark says "applied").
result<void, store_errc> account_book::let_go(round& r, std::size_t prior) {
  const std::size_t keep = o_.recent_grants;
  if (r.next.recent.size() <= keep || prior == 0) return {};
  const std::size_t target = keep - keep / 4;  // marks in runs, not one each grant
  const std::size_t leaving = std::min(prior, r.next.recent.size() - target);
  for (std::size_t i = 0; i < leaving; ++i) {
    auto marked = bucket_.put(spent_key(r.next.recent[i]), "");
    if (!marked) return io(marked.error());
    add_spent(r.next.spent_filter, r.next.recent[i]);
    add(n_.marks);
  }
  r.next.recent.erase(r.next.recent.begin(), r.next.recent.begin() + static_cast<std::ptrdiff_t>(leaving));
  r.next.spent += leaving;
  return {};
}

// One compare-and-set for the grants of the batch to this account (up to max_new_per_write new ones
// a write); a lost race reads the record again and decides again (the grants the winner applied are
// repeats now). False when the grants failed.
bool account_book::write_round(const std::string& key, std::vector<pending_grant*>& grants) {
  bool fresh = false;
  for (int t = 0; t < write_tries; ++t) {
    auto now = load(key, fresh);
    auto r = now ? decide(*now, grants) : result<round, store_errc>(now.error());
    if (!r) {
      fail_all(grants, r.error());
      return false;
    }
    if (r->applied == 0) {
      settle(grants, r->applies, r->examined);
      return true;
    }
    const auto t0 = steady::now();
    const std::string value = encode(r->next);
    auto wrote = now->revision == 0 ? bucket_.create(key, value) : bucket_.update(key, value, now->revision);
    const auto ns = static_cast<std::uint64_t>(std::chrono::nanoseconds(steady::now() - t0).count());
    add(n_.writes), add(n_.write_ns, ns), bump_max(n_.max_write_ns, ns);
    if (wrote) {
      remember(key, {std::move(r->next), *wrote});
      settle(grants, r->applies, r->examined);
      return true;
    }
    accounts_.erase(key);
    if (wrote.code() != cluster_errc::conflict) {
      fail_all(grants, io(wrote.error()));
      return false;
    }
    add(n_.conflicts);
    fresh = true;
  }
  fail_all(grants, {store_errc::io, fmt::format("bucket '{}' key '{}': lost {} races in a row",
                                                bucket_.name(), key, write_tries)});
  return false;
}

void account_book::write_account(const std::string& key, std::vector<pending_grant*>& grants) {
  spent_seen_.clear();
  auto undecided = [&] {
    return std::any_of(grants.begin(), grants.end(), [](auto* g) { return !g->decided; });
  };
  while (undecided())
    if (!write_round(key, grants)) return;
}

void account_book::apply(std::vector<pending_grant>& grants) {
  std::vector<std::string> order;
  std::unordered_map<std::string, std::vector<pending_grant*>> by_account;
  for (auto& g : grants) {
    if (g.decided) continue;
    auto [it, first] = by_account.try_emplace(g.account);
    if (first) order.push_back(g.account);
    it->second.push_back(&g);
  }
  for (const auto& key : order) write_account(key, by_account[key]);
}

}  // namespace scenert::cluster::detail
