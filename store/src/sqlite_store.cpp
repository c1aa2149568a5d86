// The writer thread: requests queue under a mutex; the thread takes what has queued up (up to
// max_batch), applies it in one transaction, commits, and only then answers each request in order.
// A burst of grants costs one fsync, and no line or front thread ever waits for the disk.
#include <scenert/store/sqlite_store.hpp>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "sqlite_file.hpp"

namespace scenert::store {
namespace {

using steady = std::chrono::steady_clock;

struct sign_in_request {
  player_id player;
  std::string owner;
  holdings_done done;
};
struct sign_out_request {
  player_id player;
};
struct write_request {
  grant g;
  grant_done done;
};
struct read_request {
  std::string owner;
  holdings_done done;
};
using request = std::variant<sign_in_request, sign_out_request, write_request, read_request>;

// Who a player is in the store; a signed-out one for a grace period more.
struct account {
  std::string owner;
  std::optional<steady::time_point> gone_since;
};

// One request's answer, made inside the transaction and given after the commit.
struct answer {
  std::optional<grant_receipt> receipt;
  std::optional<holdings> held;
  grant_done on_grant;
  holdings_done on_holdings;
};

std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void bump_max(std::atomic<std::uint64_t>& max, std::uint64_t v) {
  std::uint64_t seen = max.load(std::memory_order_relaxed);
  while (v > seen && !max.compare_exchange_weak(seen, v, std::memory_order_relaxed)) {
  }
}

}  // namespace

struct sqlite_store::impl {
  impl(std::unique_ptr<detail::sqlite_file> f, sqlite_options o) : file(std::move(f)), opt(o) {}

  std::unique_ptr<detail::sqlite_file> file;
  sqlite_options opt;
  std::mutex m;
  std::condition_variable wake;
  std::vector<request> queue;  // guarded by m
  bool stopping = false;       // guarded by m
  std::thread writer;
  // The writer thread's own.
  std::unordered_map<player_id, account> accounts;
  steady::time_point pruned = steady::now();
  struct counters {
    std::atomic<std::uint64_t> grants{0}, repeats{0}, failed{0}, reads{0}, commits{0}, commit_ns{0},
        max_commit_ns{0};
  } n;

  // False after stop (`r` is left as it was): the caller answers the request itself.
  bool enqueue(request& r) {
    {
      std::lock_guard lock(m);
      if (stopping) return false;
      queue.push_back(std::move(r));
    }
    wake.notify_one();
    return true;
  }

  void run() {
    std::vector<request> batch;
    for (;;) {
      {
        std::unique_lock lock(m);
        wake.wait(lock, [&] { return !queue.empty() || stopping; });
        if (queue.empty()) return;
        take(batch);
      }
      apply(batch);
      batch.clear();
    }
  }

  void take(std::vector<request>& batch) {
    if (queue.size() <= opt.max_batch) return batch.swap(queue);
    auto end = queue.begin() + static_cast<std::ptrdiff_t>(opt.max_batch);
    batch.assign(std::make_move_iterator(queue.begin()), std::make_move_iterator(end));
    queue.erase(queue.begin(), end);
  }

  void apply(std::vector<request>& batch);
  answer answer_one(request& r, std::int64_t now_ms, bool& failed);
  std::optional<std::string> owner_of(player_id p);
  void prune();
};

std::optional<std::string> sqlite_store::impl::owner_of(player_id p) {
  auto it = accounts.find(p);
  if (it == accounts.end()) return std::nullopt;
  if (it->second.gone_since && steady::now() - *it->second.gone_since > opt.account_grace)
    return std::nullopt;
  return it->second.owner;
}

void sqlite_store::impl::prune() {
  const auto now = steady::now();
  if (now - pruned < opt.account_grace) return;
  pruned = now;
  std::erase_if(accounts, [&](const auto& a) {
    return a.second.gone_since && now - *a.second.gone_since > opt.account_grace;
  });
}

// Inside the transaction; `failed` turns true when the file refused something (the batch is rolled
// back and every answer of it says io).
answer sqlite_store::impl::answer_one(request& r, std::int64_t now_ms, bool& failed) {
  answer a;
  auto read_holdings = [&](std::string owner) {
    holdings h{std::move(owner), {}, store_errc::ok, {}};
    if (auto got = file->holdings_of(h.owner)) {
      h.items = std::move(*got);
    } else {
      failed = true;
      h.code = store_errc::io, h.reason = got.error().message;
    }
    return h;
  };
  if (auto* in = std::get_if<sign_in_request>(&r)) {
    accounts[in->player] = {in->owner, std::nullopt};
    a.held = read_holdings(std::move(in->owner));
    a.on_holdings = std::move(in->done);
  } else if (auto* out = std::get_if<sign_out_request>(&r)) {
    if (auto it = accounts.find(out->player); it != accounts.end()) it->second.gone_since = steady::now();
  } else if (auto* w = std::get_if<write_request>(&r)) {
    grant_receipt receipt{std::move(w->g), store_errc::ok, false, {}};
    auto owner = owner_of(receipt.what.player);
    if (!owner) {
      receipt.code = store_errc::no_account;
      receipt.reason = fmt::format("player {} has no account in the store (a guest?)", receipt.what.player);
    } else if (auto applied = file->apply(receipt.what, *owner, now_ms)) {
      receipt.repeated = !*applied;
    } else {
      failed = true;
      receipt.code = store_errc::io, receipt.reason = applied.error().message;
    }
    a.receipt = std::move(receipt);
    a.on_grant = std::move(w->done);
  } else if (auto* rd = std::get_if<read_request>(&r)) {
    a.held = read_holdings(std::move(rd->owner));
    a.on_holdings = std::move(rd->done);
  }
  return a;
}

// One transaction for the batch; the answers after its commit (or its failure: all io).
void sqlite_store::impl::apply(std::vector<request>& batch) {
  std::vector<answer> answers;
  answers.reserve(batch.size());
  bool failed = false;
  auto began = file->begin();
  std::string why = began ? std::string() : began.error().message;
  const std::int64_t now_ms = wall_ms();
  for (auto& r : batch) answers.push_back(answer_one(r, now_ms, failed));
  if (began && !failed) {
    const auto t0 = steady::now();
    if (auto c = file->commit(); !c) failed = true, why = c.error().message;
    const auto ns = static_cast<std::uint64_t>(std::chrono::nanoseconds(steady::now() - t0).count());
    n.commits.fetch_add(1, std::memory_order_relaxed);
    n.commit_ns.fetch_add(ns, std::memory_order_relaxed);
    bump_max(n.max_commit_ns, ns);
  }
  if (!began || failed) file->rollback();
  for (auto& a : answers) {
    if (a.receipt) {
      if (!began || failed)
        a.receipt->code = store_errc::io, a.receipt->reason = why, a.receipt->repeated = false;
      auto& counter = a.receipt->code != store_errc::ok ? n.failed
                      : a.receipt->repeated             ? n.repeats
                                                        : n.grants;
      counter.fetch_add(1, std::memory_order_relaxed);
      if (a.on_grant) a.on_grant(std::move(*a.receipt));
    } else if (a.held) {
      if (!began || failed) a.held->code = store_errc::io, a.held->reason = why, a.held->items.clear();
      n.reads.fetch_add(1, std::memory_order_relaxed);
      if (a.on_holdings) a.on_holdings(std::move(*a.held));
    }
  }
  prune();
}

// ---- the public face -------------------------------------------------------------------

result<std::unique_ptr<sqlite_store>, store_errc> sqlite_store::open(const std::string& path,
                                                                     sqlite_options options) {
  auto file = detail::sqlite_file::open(path);
  if (!file) return file.error();
  options.max_batch = std::max<std::size_t>(options.max_batch, 1);
  auto i = std::make_unique<impl>(std::move(*file), options);
  impl* raw = i.get();
  i->writer = std::thread([raw] { raw->run(); });
  return std::unique_ptr<sqlite_store>(new sqlite_store(std::move(i)));
}

sqlite_store::sqlite_store(std::unique_ptr<impl> i) : impl_(std::move(i)) {}

sqlite_store::~sqlite_store() { stop(); }

void sqlite_store::stop() {
  {
    std::lock_guard lock(impl_->m);
    impl_->stopping = true;
  }
  impl_->wake.notify_one();
  if (impl_->writer.joinable()) impl_->writer.join();
}

namespace {
holdings closed_holdings(std::string owner) {
  return {std::move(owner), {}, store_errc::closed, "the player store has stopped"};
}
}  // namespace

void sqlite_store::sign_in(player_id player, std::string owner, holdings_done done) {
  request r = sign_in_request{player, std::move(owner), std::move(done)};
  if (impl_->enqueue(r)) return;
  auto& in = std::get<sign_in_request>(r);
  in.done(closed_holdings(std::move(in.owner)));
}

void sqlite_store::sign_out(player_id player) {
  request r = sign_out_request{player};
  (void)impl_->enqueue(r);
}

void sqlite_store::write(grant g, grant_done done) {
  request r = write_request{std::move(g), std::move(done)};
  if (impl_->enqueue(r)) return;
  auto& w = std::get<write_request>(r);
  w.done(grant_receipt{std::move(w.g), store_errc::closed, false, "the player store has stopped"});
}

void sqlite_store::read(std::string owner, holdings_done done) {
  request r = read_request{std::move(owner), std::move(done)};
  if (impl_->enqueue(r)) return;
  auto& rd = std::get<read_request>(r);
  rd.done(closed_holdings(std::move(rd.owner)));
}

store_stats sqlite_store::stats() const {
  const auto& n = impl_->n;
  auto g = [](const std::atomic<std::uint64_t>& c) { return c.load(std::memory_order_relaxed); };
  return {g(n.grants),  g(n.repeats),   g(n.failed),       g(n.reads),
          g(n.commits), g(n.commit_ns), g(n.max_commit_ns)};
}

const std::string& sqlite_store::path() const noexcept { return impl_->file->path(); }

std::string default_store_path(std::string_view table_path) {
  std::string base(table_path);
  if (base.size() > 5 && base.ends_with(".json")) base.resize(base.size() - 5);
  return base + ".store.sqlite";
}

}  // namespace scenert::store
