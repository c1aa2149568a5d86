#include <scenert/cluster/node_lease.hpp>
#include "subjects.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "records.hpp"

namespace scenert::cluster {

namespace {

constexpr int cas_tries = 8;  // lost races in a row before a call gives up (each is a fresh read)

std::string key_of(const std::string& name) { return "node." + name; }

cluster_result<node_entry> read(const kv_bucket& nodes, const std::string& key) {
  auto got = nodes.get(key);
  if (!got) return got.error();
  auto rec = detail::decode_node(key, got->value);
  if (!rec) return rec.error();
  return node_entry{std::move(rec).value(), got->revision};
}

}  // namespace

cluster_result<node_lease> node_lease::join(kv_bucket& nodes, const std::string& name, std::uint32_t load,
                                            std::vector<scene_id> scenes, listening from) {
  if (!valid_name(name))
    return fail(cluster_errc::bad_name,
                fmt::format("cluster: node name '{}' is not 1-64 letters, digits, '-' or '_'", name));
  const std::string key = key_of(name);
  for (int i = 0; i < cas_tries; ++i) {
    auto old = read(nodes, key);
    if (!old && old.code() != cluster_errc::not_found) return old.error();
    node_record r{name,   old ? old->record.epoch + 1 : 1,   load, false,
                  scenes, from == listening::from_first_beat};
    auto rev =
        old ? nodes.update(key, detail::encode(r), old->revision) : nodes.create(key, detail::encode(r));
    if (rev) return node_lease(nodes, node_entry{std::move(r), *rev});
    if (rev.code() != cluster_errc::conflict) return rev.error();
  }
  return fail(cluster_errc::conflict,
              fmt::format("cluster: node '{}': join lost {} races in a row", name, cas_tries));
}

cluster_result<void> node_lease::beat(std::uint32_t load) {
  node_record next = entry_.record;
  next.load = load;
  next.starting = false;
  const std::string key = key_of(next.name);
  auto rev = nodes_.update(key, detail::encode(next), entry_.revision);
  if (rev) {
    entry_ = {std::move(next), *rev};
    return {};
  }
  if (rev.code() != cluster_errc::conflict) return rev.error();
  auto now = read(nodes_, key);
  std::string why = !now               ? now.error().message
                    : now->record.dead ? fmt::format("declared dead at epoch {}", now->record.epoch)
                    : now->record.epoch != next.epoch ? fmt::format("taken by epoch {}", now->record.epoch)
                                                      : std::string("written by another process");
  return fail(cluster_errc::fenced,
              fmt::format("cluster: node '{}' epoch {} is fenced: {}", next.name, next.epoch, why));
}

cluster_result<std::vector<node_entry>> list_nodes(const kv_bucket& nodes,
                                                   std::span<const std::string> expected) {
  auto keys = nodes.keys();
  if (!keys) return keys.error();
  for (const auto& name : expected)
    if (std::find(keys->begin(), keys->end(), key_of(name)) == keys->end()) keys->push_back(key_of(name));
  std::vector<node_entry> out;
  for (const auto& key : *keys) {
    if (!key.starts_with("node.")) continue;
    auto e = read(nodes, key);
    if (!e && e.code() == cluster_errc::not_found) continue;  // deleted since the listing
    if (!e) return e.error();
    out.push_back(std::move(e).value());
  }
  return out;
}

cluster_result<node_entry> declare_dead(kv_bucket& nodes, const std::string& name, std::uint64_t seen) {
  const std::string key = key_of(name);
  auto now = read(nodes, key);
  if (!now) return now.error();
  if (now->revision != seen || now->record.dead)
    return fail(cluster_errc::conflict,
                fmt::format("cluster: node '{}' is not at revision {} any more (now {}{})", name, seen,
                            now->revision, now->record.dead ? ", dead" : ""));
  node_record r = now->record;
  r.dead = true;
  auto rev = nodes.update(key, detail::encode(r), seen);
  if (!rev) return rev.error();
  return node_entry{std::move(r), *rev};
}

void heartbeat_watch::saw(const std::vector<node_entry>& nodes, clock::time_point now) {
  const auto since = std::max(now, counting_from_);
  for (const auto& e : nodes) {
    auto [it, fresh] = nodes_.try_emplace(e.record.name, seen{e, since});
    if (!fresh && it->second.entry.revision != e.revision) it->second = {e, since};
  }
}

void heartbeat_watch::restart(clock::time_point from) {
  nodes_.clear();
  counting_from_ = from;
}

std::vector<node_entry> heartbeat_watch::silent(clock::time_point now, clock::duration dead_after) const {
  std::vector<node_entry> out;
  for (const auto& [name, s] : nodes_)
    if (!s.entry.record.dead && now - s.since >= dead_after) out.push_back(s.entry);
  return out;
}

}  // namespace scenert::cluster
