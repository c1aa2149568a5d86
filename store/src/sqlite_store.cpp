// The writer thread: calls queue in a store_queue; the thread takes what has queued up (up to
// max_batch), applies it in one transaction, commits, and only then answers each request in order.
// A burst of grants costs one fsync, and no line or front thread ever waits for the disk.
#include <scenert/scene/store_queue.hpp>
#include <scenert/store/sqlite_store.hpp>

#include <atomic>
#include <deque>
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
  store_queue calls;
  std::thread writer;
  // The writer thread's own.
  std::unordered_map<player_id, account> accounts;
  steady::time_point pruned = steady::now();
  struct counters {
    std::atomic<std::uint64_t> grants{0}, repeats{0}, failed{0}, reads{0}, commits{0}, commit_ns{0},
        max_commit_ns{0};
  } n;

  void run() {
    std::vector<store_request> batch;
    while (calls.take(batch, opt.max_batch)) apply(batch);
  }

  void apply(std::vector<store_request>& batch);
  answer answer_one(store_request& r, std::int64_t now_ms, bool& failed);
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
answer sqlite_store::impl::answer_one(store_request& r, std::int64_t now_ms, bool& failed) {
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
  if (auto* in = std::get_if<store_sign_in>(&r)) {
    accounts[in->player] = {in->owner, std::nullopt};
    a.held = read_holdings(std::move(in->owner));
    a.on_holdings = std::move(in->done);
  } else if (auto* out = std::get_if<store_sign_out>(&r)) {
    if (auto it = accounts.find(out->player); it != accounts.end()) it->second.gone_since = steady::now();
  } else if (auto* w = std::get_if<store_write>(&r)) {
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
  } else if (auto* rd = std::get_if<store_read>(&r)) {
    a.held = read_holdings(std::move(rd->owner));
    a.on_holdings = std::move(rd->done);
  }
  return a;
}

// One transaction for the batch; the answers after its commit (or its failure: all io).
void sqlite_store::impl::apply(std::vector<store_request>& batch) {
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
  impl_->calls.stop();
  if (impl_->writer.joinable()) impl_->writer.join();
}

void sqlite_store::sign_in(player_id player, std::string owner, holdings_done done) {
  impl_->calls.push(store_sign_in{player, std::move(owner), std::move(done)});
}

void sqlite_store::sign_out(player_id player) { impl_->calls.push(store_sign_out{player}); }

void sqlite_store::write(grant g, grant_done done) {
  impl_->calls.push(store_write{std::move(g), std::move(done)});
}

void sqlite_store::read(std::string owner, holdings_done done) {
  impl_->calls.push(store_read{std::move(owner), std::move(done)});
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
