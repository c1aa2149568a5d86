// The worker: calls queue in a store_queue; the worker takes what has queued up (up to max_batch)
// and serves it in order. Grants in a row are gathered and written one record per account (the
// bucket's group commit); a sign-in or a read after them waits for their writes, so it sees them.
// Answers leave in the order the calls were made, each after the write it depends on.
#include <scenert/cluster/kv_player_store.hpp>
#include <scenert/scene/store_queue.hpp>

#include <thread>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include <scenert/cluster/nats_link.hpp>

#include "account_book.hpp"

namespace scenert::cluster {
namespace {

using steady = std::chrono::steady_clock;

// Refused before the store is asked: the same checks a line makes, for any caller.
std::optional<std::string> badness(const grant& g) {
  if (g.count <= 0)
    return fmt::format("a grant of {} of item {}: the count must be above 0", g.count, g.item);
  if (g.id.empty()) return std::string("a grant without an id");
  if (g.id.size() > max_grant_id_bytes)
    return fmt::format("a grant id of {} bytes: at most {}", g.id.size(), max_grant_id_bytes);
  return std::nullopt;
}

}  // namespace

struct kv_player_store::impl {
  impl(std::unique_ptr<nats_link> l, kv_bucket b, kv_store_options o)
      : link(std::move(l)), opt(std::move(o)), book(std::move(b), opt, n) {}

  std::unique_ptr<nats_link> link;
  kv_store_options opt;
  detail::kv_counters n;
  detail::account_book book;  // the worker's own
  store_queue calls;
  std::thread worker;
  std::vector<detail::pending_grant> grants;  // the worker's: grants in a row, not written yet

  // Waits for calls, or for the next signed-out player's record to go (the only timer here).
  void run() {
    std::vector<store_request> batch;
    while (calls.take(batch, opt.max_batch, book.next_erase())) {
      serve(batch);
      book.erase_due();
    }
  }

  void serve(std::vector<store_request>& batch);
  void gather(store_write& w);
  void flush();
};

// The grant's account now (a sign-out later in the batch does not change it); a grant that cannot
// be written is decided at once and answered in its turn.
void kv_player_store::impl::gather(store_write& w) {
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

void kv_player_store::impl::serve(std::vector<store_request>& batch) {
  for (auto& r : batch) {
    if (auto* w = std::get_if<store_write>(&r)) {
      gather(*w);
      continue;
    }
    if (auto* out = std::get_if<store_sign_out>(&r)) {  // its grants before it keep their account
      book.sign_out(out->player);
      continue;
    }
    flush();
    if (auto* in = std::get_if<store_sign_in>(&r)) {
      auto held = book.sign_in(in->player, std::move(in->owner));
      if (in->done) in->done(std::move(held));
    } else if (auto* rd = std::get_if<store_read>(&r)) {
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
  impl_->calls.stop();
  if (impl_->worker.joinable()) impl_->worker.join();
}

void kv_player_store::sign_in(player_id player, std::string owner, holdings_done done) {
  impl_->calls.push(store_sign_in{player, std::move(owner), std::move(done)});
}

void kv_player_store::sign_out(player_id player) { impl_->calls.push(store_sign_out{player}); }

void kv_player_store::write(grant g, grant_done done) {
  impl_->calls.push(store_write{std::move(g), std::move(done)});
}

void kv_player_store::read(std::string owner, holdings_done done) {
  impl_->calls.push(store_read{std::move(owner), std::move(done)});
}

kv_store_stats kv_player_store::stats() const {
  const auto& n = impl_->n;
  auto g = [](const std::atomic<std::uint64_t>& c) { return c.load(std::memory_order_relaxed); };
  kv_store_stats s;
  s.grants = g(n.grants), s.repeats = g(n.repeats), s.failed = g(n.failed), s.reads = g(n.reads);
  s.writes = g(n.writes), s.conflicts = g(n.conflicts), s.marks = g(n.marks),
  s.spent_reads = g(n.spent_reads);
  s.write_ns = g(n.write_ns), s.max_write_ns = g(n.max_write_ns), s.expired = g(n.expired);
  return s;
}

const std::string& kv_player_store::bucket() const noexcept { return impl_->opt.bucket; }

}  // namespace scenert::cluster
