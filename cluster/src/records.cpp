#include "records.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace scenert::cluster::detail {

using nlohmann::json;

namespace {

constexpr std::string_view state_names[] = {"open", "closed", "tombstoned"};

error<cluster_errc> bad(std::string_view key, std::string_view why) {
  return fail(cluster_errc::bad_record, fmt::format("cluster: key '{}': {}", key, why));
}

}  // namespace

std::string encode(const node_record& r) {
  json j{{"name", r.name}, {"epoch", r.epoch}, {"load", r.load}, {"dead", r.dead}};
  if (!r.scenes.empty()) j["scenes"] = r.scenes;
  if (r.starting) j["starting"] = true;
  return j.dump();
}

std::string encode(const line_record& r) {
  return json{{"scene", r.scene},           {"line", r.line},
              {"generation", r.generation}, {"node", r.node},
              {"epoch", r.epoch},           {"capacity", r.capacity},
              {"players", r.players},       {"state", state_names[static_cast<std::size_t>(r.state)]}}
      .dump();
}

std::string encode(const session_record& r) {
  return json{{"player", r.player}, {"name", r.name}, {"gateway", r.gateway}}.dump();
}

cluster_result<session_record> decode_session(std::string_view key, std::string_view text) {
  auto j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return bad(key, "not a JSON object");
  try {
    return session_record{j.at("player").get<player_id>(), j.at("name").get<std::string>(),
                          j.at("gateway").get<std::string>()};
  } catch (const json::exception& e) {
    return bad(key, fmt::format("not a session record ({})", e.what()));
  }
}

std::string encode(const party_record& r) { return json{{"node", r.node}}.dump(); }

cluster_result<party_record> decode_party(std::string_view key, std::string_view text) {
  auto j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return bad(key, "not a JSON object");
  try {
    return party_record{j.at("node").get<std::string>()};
  } catch (const json::exception& e) {
    return bad(key, fmt::format("not a party record ({})", e.what()));
  }
}

cluster_result<node_record> decode_node(std::string_view key, std::string_view text) {
  auto j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return bad(key, "not a JSON object");
  try {
    // A node hosting every scene writes no "scenes" (as records written before they were added),
    // a node past its start no "starting".
    auto scenes = j.find("scenes");
    return node_record{j.at("name").get<std::string>(),
                       j.at("epoch").get<std::uint64_t>(),
                       j.at("load").get<std::uint32_t>(),
                       j.at("dead").get<bool>(),
                       scenes != j.end() ? scenes->get<std::vector<scene_id>>() : std::vector<scene_id>{},
                       j.value("starting", false)};
  } catch (const json::exception& e) {
    return bad(key, fmt::format("not a node record ({})", e.what()));
  }
}

cluster_result<line_record> decode_line(std::string_view key, std::string_view text) {
  auto j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return bad(key, "not a JSON object");
  try {
    line_record r;
    r.scene = j.at("scene").get<scene_id>();
    r.line = j.at("line").get<std::uint32_t>();
    r.generation = j.at("generation").get<std::uint32_t>();
    r.node = j.at("node").get<std::string>();
    r.epoch = j.at("epoch").get<std::uint64_t>();
    // Records written before capacity was added have none: 0, unknown.
    if (auto capacity = j.find("capacity"); capacity != j.end()) r.capacity = capacity->get<std::uint32_t>();
    r.players = j.at("players").get<std::uint32_t>();
    const auto state = j.at("state").get<std::string>();
    std::size_t i = 0;
    while (i < std::size(state_names) && state_names[i] != state) ++i;
    if (i == std::size(state_names)) return bad(key, fmt::format("unknown line state '{}'", state));
    r.state = static_cast<line_state_in_cluster>(i);
    return r;
  } catch (const json::exception& e) {
    return bad(key, fmt::format("not a line record ({})", e.what()));
  }
}

}  // namespace scenert::cluster::detail
