#include <scenert/cluster/line_choice.hpp>

#include <tuple>

namespace scenert::cluster {

std::optional<std::size_t> choose_line(allocation_policy policy, std::uint32_t below,
                                       std::span<const line_load> lines, std::string_view own) {
  // Smaller is better: the policy's order of the count, then the player's own node, then the id.
  auto rank = [&](const line_load& l) {
    const std::int64_t count = policy == allocation_policy::fill_first ? -std::int64_t{l.players} : l.players;
    return std::tuple(count, l.node != own, l.line);
  };
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i].players < below && (!best || rank(lines[i]) < rank(lines[*best]))) best = i;
  return best;
}

}  // namespace scenert::cluster
