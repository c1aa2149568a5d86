#include <scenert/nav/path_queue.hpp>

#include <algorithm>

namespace scenert::nav {

const char* to_string(request_state state) noexcept {
  switch (state) {
    case request_state::waiting: return "waiting";
    case request_state::running: return "running";
    case request_state::found: return "found";
    case request_state::unreachable: return "unreachable";
    case request_state::out_of_map: return "out_of_map";
  }
  return "unknown";
}

path_queue::path_queue(std::shared_ptr<const nav_map> map, path_queue_options options)
    : map_(std::move(map)), options_(options) {
  options_.max_requests = std::max<std::uint32_t>(1, options_.max_requests);
  // A step() orders the running requests in a fixed array: at most 64 of them.
  options_.max_running = std::clamp<std::uint32_t>(options_.max_running, 1, std::min(options_.max_requests, 64u));
  requests_.resize(options_.max_requests);
  contexts_.resize(options_.max_running);
  waiting_.resize(options_.max_requests);
  running_.reserve(options_.max_running);
  for (std::uint32_t i = options_.max_requests; i-- > 0;) free_slots_.push_back(i);
  for (std::uint32_t i = options_.max_running; i-- > 0;) free_contexts_.push_back(i);
}

path_queue::request* path_queue::find(path_handle handle) {
  if (handle.slot >= requests_.size()) return nullptr;
  request& r = requests_[handle.slot];
  return r.held && r.generation == handle.generation ? &r : nullptr;
}

const path_queue::request* path_queue::find(path_handle handle) const {
  return const_cast<path_queue*>(this)->find(handle);
}

nav_result<path_handle> path_queue::submit(cell start, cell goal, cell_filter filter) {
  if (free_slots_.empty()) return nav_fail(nav_errc::queue_full, "the line's path queue holds its maximum");
  const std::uint32_t slot = free_slots_.back();
  free_slots_.pop_back();
  request& r = requests_[slot];
  r.held = true, r.state = request_state::waiting, r.start = start, r.goal = goal, r.filter = filter;
  r.path.clear();
  ++held_;
  const path_handle handle{slot, r.generation};
  waiting_[(waiting_head_ + waiting_count_++) % waiting_.size()] = handle;
  start_waiting();
  return handle;
}

// Takes a cancelled request out of the ring, so that the ring never holds more than max_requests.
void path_queue::drop_waiting(path_handle handle) {
  const auto size = static_cast<std::uint32_t>(waiting_.size());
  std::uint32_t k = 0;
  while (k < waiting_count_ && waiting_[(waiting_head_ + k) % size] != handle) ++k;
  for (; k + 1 < waiting_count_; ++k) waiting_[(waiting_head_ + k) % size] = waiting_[(waiting_head_ + k + 1) % size];
  if (k < waiting_count_) --waiting_count_;
}

// Moves waiting requests, oldest first, into free contexts.
void path_queue::start_waiting() {
  while (!free_contexts_.empty() && waiting_count_ > 0) {
    const path_handle h = waiting_[waiting_head_];
    waiting_head_ = (waiting_head_ + 1) % static_cast<std::uint32_t>(waiting_.size());
    --waiting_count_;
    request* r = find(h);
    if (r == nullptr || r->state != request_state::waiting) continue;
    r->context = free_contexts_.back();
    const auto status = contexts_[r->context].begin(*map_, r->start, r->goal, options_.algo, r->filter);
    free_contexts_.pop_back();
    r->state = request_state::running;
    running_.push_back(h.slot);
    if (status != search_status::running) finish(h.slot, status);
  }
}

void path_queue::finish(std::uint32_t slot, search_status status) {
  request& r = requests_[slot];
  if (status == search_status::found) contexts_[r.context].path(r.path);
  r.state = status == search_status::found         ? request_state::found
            : status == search_status::out_of_map ? request_state::out_of_map
                                                  : request_state::unreachable;
  free_contexts_.push_back(r.context);
  running_.erase(std::find(running_.begin(), running_.end(), slot));
}

std::uint32_t path_queue::run_slice(std::uint32_t slot, std::uint32_t budget) {
  search_context& ctx = contexts_[requests_[slot].context];
  const std::uint32_t before = ctx.expansions();
  const search_status status = ctx.step(budget);
  const std::uint32_t used = ctx.expansions() - before;
  if (status != search_status::running) finish(slot, status);
  return used;
}

std::uint32_t path_queue::step(std::uint32_t budget) {
  std::uint32_t used = 0;
  start_waiting();
  while (used < budget && !running_.empty()) {
    // An equal share each, the first turn rotating from call to call so that the remainders of
    // the division do not always favour the same request.
    const auto n = static_cast<std::uint32_t>(running_.size());
    const std::uint32_t share = std::max<std::uint32_t>(1, (budget - used) / n);
    const std::uint32_t first = running_[cursor_++ % n];
    const std::vector<std::uint32_t>::const_iterator at = std::find(running_.begin(), running_.end(), first);
    std::uint32_t order[64];  // max_running <= 64
    std::uint32_t count = 0;
    for (auto it = at; it != running_.end() && count < 64; ++it) order[count++] = *it;
    for (auto it = running_.cbegin(); it != at && count < 64; ++it) order[count++] = *it;
    for (std::uint32_t k = 0; k < count && used < budget; ++k) used += run_slice(order[k], std::min(share, budget - used));
    start_waiting();
  }
  return used;
}

nav_result<request_state> path_queue::state(path_handle handle) const {
  const request* r = find(handle);
  if (r == nullptr) return nav_fail(nav_errc::stale_handle, "no such path request (done, cancelled or recycled)");
  return r->state;
}

nav_errc path_queue::path(path_handle handle, std::vector<cell>& out) const {
  const request* r = find(handle);
  out.clear();
  if (r == nullptr) return nav_errc::stale_handle;
  if (r->state == request_state::found) out = r->path;
  if (r->state == request_state::running) contexts_[r->context].partial_path(out);
  return nav_errc::ok;
}

nav_errc path_queue::cancel(path_handle handle) {
  request* r = find(handle);
  if (r == nullptr) return nav_errc::stale_handle;
  if (r->state == request_state::running) {
    free_contexts_.push_back(r->context);
    running_.erase(std::find(running_.begin(), running_.end(), handle.slot));
  }
  if (r->state == request_state::waiting) drop_waiting(handle);
  r->held = false;
  if (++r->generation == 0) r->generation = 1;  // 0 stays the never-valid generation
  free_slots_.push_back(handle.slot);
  --held_;
  start_waiting();
  return nav_errc::ok;
}

}  // namespace scenert::nav
