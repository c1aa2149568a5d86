#pragma once
/// The NATS subjects of a cluster. Names of nodes and gateways are single subject tokens (letters,
/// digits, '-' and '_'), so a name never reaches into another's subjects.

#include <algorithm>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include <scenert/scene/fwd.hpp>

namespace scenert::cluster {

/// 1-64 letters, digits, '-' or '_'.
[[nodiscard]] inline bool valid_name(std::string_view name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

namespace subjects {

/// A gateway's batch of requests for a node's world.
[[nodiscard]] inline std::string requests(std::string_view node) {
  return fmt::format("scenert.node.{}.requests", node);
}
/// A node's lines as they stand, asked by a gateway that missed events.
[[nodiscard]] inline std::string views(std::string_view node) {
  return fmt::format("scenert.node.{}.views", node);
}
/// A gateway claiming a player whose client resumed on it (request/reply).
[[nodiscard]] inline std::string claim(std::string_view node) {
  return fmt::format("scenert.node.{}.claim", node);
}
/// Where a node has a player, if it has it (request/reply): a team-mate looked for.
[[nodiscard]] inline std::string where(std::string_view node) {
  return fmt::format("scenert.node.{}.where", node);
}
/// A player handed over to this node by the node it stood on (request with a reply subject).
[[nodiscard]] inline std::string arrive(std::string_view node) {
  return fmt::format("scenert.node.{}.arrive", node);
}
/// Where a handing node hears how its hand-overs went.
[[nodiscard]] inline std::string arrived(std::string_view node) {
  return fmt::format("scenert.node.{}.arrived", node);
}
/// A hand-over its node gave up waiting for: the player leaves this node again if it was placed.
[[nodiscard]] inline std::string release(std::string_view node) {
  return fmt::format("scenert.node.{}.release", node);
}
/// Where a handing node hears that a release reached the node it was said to.
[[nodiscard]] inline std::string released(std::string_view node) {
  return fmt::format("scenert.node.{}.released", node);
}
/// Tells a gateway that another one claimed one of its players.
[[nodiscard]] inline std::string claimed(std::string_view gateway) {
  return fmt::format("scenert.gateway.{}.claimed", gateway);
}
/// A gateway's beat, every second: the nodes keep its players while they hear it.
[[nodiscard]] inline std::string gateway_beat(std::string_view gateway) {
  return fmt::format("scenert.gateway.{}.beat", gateway);
}
/// Every gateway's beat.
inline constexpr const char* all_gateway_beats = "scenert.gateway.*.beat";
/// The gateway named in a beat's subject (empty if `subject` is not one).
[[nodiscard]] inline std::string_view gateway_of_beat(std::string_view subject) {
  constexpr std::string_view prefix = "scenert.gateway.", suffix = ".beat";
  if (!subject.starts_with(prefix) || !subject.ends_with(suffix)) return {};
  return subject.substr(prefix.size(), subject.size() - prefix.size() - suffix.size());
}
/// A node's batch of answers for a gateway.
[[nodiscard]] inline std::string answers(std::string_view gateway) {
  return fmt::format("scenert.gateway.{}.answers", gateway);
}
/// Where a gateway hears the views it asked for.
[[nodiscard]] inline std::string views_inbox(std::string_view gateway) {
  return fmt::format("scenert.gateway.{}.views", gateway);
}
/// One line's events of a tick, from the node that hosts it.
[[nodiscard]] inline std::string line(std::string_view node, line_handle l) {
  return fmt::format("scenert.line.{}.{}.{}", node, l.scene, l.line);
}
/// Every line of every node.
inline constexpr const char* all_lines = "scenert.line.>";
/// The node named in a line subject (empty if `subject` is not one).
[[nodiscard]] inline std::string_view node_of_line(std::string_view subject) {
  constexpr std::string_view prefix = "scenert.line.";
  if (subject.substr(0, prefix.size()) != prefix) return {};
  subject.remove_prefix(prefix.size());
  return subject.substr(0, subject.find('.'));
}

}  // namespace subjects
}  // namespace scenert::cluster
