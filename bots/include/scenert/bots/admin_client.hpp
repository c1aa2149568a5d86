#pragma once
/// What the bots read from a server's admin endpoint: the scene definitions to travel to (/scenes)
/// and every open line's entities (/lines/SCENE/LINE), over plain blocking HTTP/1.1 on loopback.

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <scenert/runtime/result.hpp>

#include <scenert/admin/server.hpp>
#include <scenert/bots/verify.hpp>

namespace scenert::bots {

using admin::endpoint;  // the admin endpoints the bots read

/// GET `target` from `at`; the body of a 200, or an error naming the URL and the status or failure.
/// The error's code is the status as text ("404") for an answer other than 200, else what failed:
/// "resolve", "connect", "send", "receive" or "timeout" (`timeout` bounds the whole exchange).
[[nodiscard]] result<std::string, std::string> http_get(const endpoint& at, std::string_view target,
                                                        std::chrono::milliseconds timeout);

/// A scene definition a bot can go to, from /scenes.
struct scene_entry {
  std::uint32_t id = 0;
  std::string name;
  std::string kind;                   ///< "town", "field", "dungeon", ... as /scenes names it
  std::string instances;              ///< "shared", "party" or "both" (private instances for parties)
  std::vector<std::uint32_t> lines;   ///< open line ids
  std::vector<std::uint32_t> spaces;  ///< towns: the space (phase) definitions it carries
};

/// The scene definitions of /scenes.
[[nodiscard]] result<std::vector<scene_entry>, std::string> read_scenes(const endpoint& admin,
                                                                        std::chrono::milliseconds timeout);

/// Every open line's views (reads /scenes, then /lines/SCENE/LINE for each open line), of every
/// admin endpoint given (a cluster's nodes, each hosting its own lines).
[[nodiscard]] result<std::vector<true_view>, std::string> read_truth(std::span<const endpoint> admins,
                                                                     std::chrono::milliseconds timeout);

}  // namespace scenert::bots
