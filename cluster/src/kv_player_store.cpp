// The worker: requests queue under a mutex; the worker takes what has queued up (up to max_batch)
// and serves it in order. Grants in a row are gathered and written one record per account (the
// bucket's group commit); a sign-in or a read after them waits for their writes, so it sees them.
// Answers leave in the order the calls were made, each after the write it depends on.
#include <scenert/cluster/kv_player_store.hpp>

#include <condition_variable>
#include <mutex>
#include <thread>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include <scenert/cluster/nats_link.hpp>

#include "account_book.hpp"

namespace scenert::cluster {
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

// Refused before the store is asked: the same checks a line makes, for any caller.
std::optional<std::string> badness(const grant& g) {
  if (g.count <= 0)
    return fmt::format("a grant of {} of item {}: the count must be above 0", g.count, g.item);
  if (g.id.empty()) return std::string("a grant without an id");
  if (g.id.size() > max_grant_id_bytes)
    return fmt::format("a grant id of {} bytes: at most {}", g.id.size(), max_grant_id_bytes);
  return std::nullopt;
}

holdings closed_holdings(std::string owner) {
  return {std::move(owner), {}, store_errc::closed, "the player store has stopped"};
}

}  // namespace

struct kv_player_store::impl {
  impl(std::unique_ptr<nats_link> l, kv_bucket b, kv_store_options o)
      : link(std::move(l)), opt(std::move(o)), book(std::move(b), opt, n) {}

  std::unique_ptr<nats_link> link;
  kv_store_options opt;
  detail::kv_counters n;
  detail::account_book book;  // the worker's own
  std::mutex m;
  std::condition_variable wake;
  std::vector<request> queue;  // guarded by m
  bool stopping = false;       // guarded by m
  std::thread worker;
  std::vector<detail::pending_grant> grants;  // the worker's: grants in a row, not written yet

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

  // Waits for requests, or for the next signed-out player's record to go (the only timer here).
  void run() {
    std::vector<request> batch;
    for (;;) {
      {
        std::unique_lock lock(m);
        auto ready = [&] { return !queue.empty() || stopping; };
        if (auto due = book.next_erase())
          wake.wait_until(lock, *due, ready);
        else
          wake.wait(lock, ready);
        if (queue.empty() && stopping) return;
        take(batch);
      }
      serve(batch);
      batch.clear();
      book.erase_due();
    }
  }

  void take(std::vector<request>& batch) {
    if (queue.size() <= opt.max_batch) return batch.swap(queue);
    auto end = queue.begin() + static_cast<std::ptrdiff_t>(opt.max_batch);
    batch.assign(std::make_move_iterator(queue.begin()), std::make_move_iterator(end));
    queue.erase(queue.begin(), end);
  }

  void serve(std::vector<request>& batch);
  void gather(write_request& w);
  void flush();
};

// The grant's account now (a sign-out later in the batch does not change it); a grant that cannot
// be written is decided at once and answered in its turn.
void kv_player_store::impl::gather(write_request& w) {
  detail::pending_grant p{{std::move(w.g), store_errc::ok, false, {}}, std::move(w.done), {}, {}, false};
  if (auto bad = badness(p.receipt.what)) {
    p.decided = true, p.receipt.code = store_errc::bad_grant, p.receipt.reason = std::move(*bad);
  } else if (auto owner = book.owner_of(p.receipt.what.player); !owner) {
    p.decided = true, p.receipt.code = owner.code(), p.receipt.reason = owner.error().message;
  } else {
    p.account = detail::account_key(*owner);
    p.id = detail::base64url(p.receipt.what.id);
  }
  grants.push_back(std::move(p));
}

// Writes the gathered grants and answers them in the order they came.
void kv_player_store::impl::flush() {
  if (grants.empty()) return;
  book.apply(grants);
  for (auto& g : grants) {
    auto& counter = g.receipt.code != store_errc::ok ? n.failed : g.receipt.repeated ? n.repeats : n.grants;
    counter.fetch_add(1, std::memory_order_relaxed);
    if (g.done) g.done(std::move(g.receipt));
  }
  grants.clear();
}

void kv_player_store::impl::serve(std::vector<request>& batch) {
  for (auto& r : batch) {
    if (auto* w = std::get_if<write_request>(&r)) {
      gather(*w);
      continue;
    }
    if (auto* out = std::get_if<sign_out_request>(&r)) {  // its grants before it keep their account
      book.sign_out(out->player);
      continue;
    }
    flush();
    if (auto* in = std::get_if<sign_in_request>(&r)) {
      auto held = book.sign_in(in->player, std::move(in->owner));
      if (in->done) in->done(std::move(held));
    } else if (auto* rd = std::get_if<read_request>(&r)) {
      auto held = book.read(std::move(rd->owner));
      if (rd->done) rd->done(std::move(held));
    }
  }
  flush();
}

// ---- the public face -------------------------------------------------------------------

result<std::unique_ptr<kv_player_store>, store_errc> kv_player_store::open(kv_store_options options) {
  link_options lo;
  lo.url = options.url;
  lo.name = options.name;
  lo.timeout = options.timeout;
  auto link = nats_link::connect(lo);
  if (!link) return fail(store_errc::io, fmt::format("player store: {}", link.error().message));
  auto bucket = (*link)->bucket(options.bucket);
  if (!bucket) return fail(store_errc::io, fmt::format("player store: {}", bucket.error().message));
  options.max_batch = std::max<std::size_t>(options.max_batch, 1);
  auto i = std::make_unique<impl>(std::move(link).value(), std::move(bucket).value(), std::move(options));
  impl* raw = i.get();
  i->worker = std::thread([raw] { raw->run(); });
  return std::unique_ptr<kv_player_store>(new kv_player_store(std::move(i)));
}

kv_player_store::kv_player_store(std::unique_ptr<impl> i) : impl_(std::move(i)) {}

kv_player_store::~kv_player_store() { stop(); }

void kv_player_store::stop() {
  {
    std::lock_guard lock(impl_->m);
    impl_->stopping = true;
  }
  impl_->wake.notify_one();
  if (impl_->worker.joinable()) impl_->worker.join();
}

void kv_player_store::sign_in(player_id player, std::string owner, holdings_done done) {
  request r = sign_in_request{player, std::move(owner), std::move(done)};
  if (impl_->enqueue(r)) return;
  auto& in = std::get<sign_in_request>(r);
  if (in.done) in.done(closed_holdings(std::move(in.owner)));
}

void kv_player_store::sign_out(player_id player) {
  request r = sign_out_request{player};
  (void)impl_->enqueue(r);
}

void kv_player_store::write(grant g, grant_done done) {
  request r = write_request{std::move(g), std::move(done)};
  if (impl_->enqueue(r)) return;
  auto& w = std::get<write_request>(r);
  if (w.done)
    w.done(grant_receipt{std::move(w.g), store_errc::closed, false, "the player store has stopped"});
}

void kv_player_store::read(std::string owner, holdings_done done) {
  request r = read_request{std::move(owner), std::move(done)};
  if (impl_->enqueue(r)) return;
  auto& rd = std::get<read_request>(r);
  if (rd.done) rd.done(closed_holdings(std::move(rd.owner)));
}

kv_store_stats kv_player_store::stats() const {
  const auto& n = impl_->n;
  auto g = [](const std::atomic<std::uint64_t>& c) { return c.load(std::memory_order_relaxed); };
  kv_store_stats s;
  s.grants = g(n.grants), s.repeats = g(n.repeats), s.failed = g(n.failed), s.reads = g(n.reads);
  s.writes = g(n.writes), s.conflicts = g(n.conflicts), s.marks = g(n.marks),
  s.spent_reads = g(n.spent_reads);
  s.write_ns = g(n.write_ns), s.max_write_ns = g(n.max_write_ns);
  return s;
}

const std::string& kv_player_store::bucket() const noexcept { return impl_->opt.bucket; }

}  // namespace scenert::cluster
