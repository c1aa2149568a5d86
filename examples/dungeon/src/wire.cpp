#include <dungeon/wire.hpp>

namespace dungeon {

void put(std::string& out, std::uint64_t value, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

std::optional<std::uint64_t> take(std::string_view in, std::size_t& at, std::size_t bytes) {
  if (in.size() < at || in.size() - at < bytes) return std::nullopt;
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < bytes; ++i)
    value |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
  at += bytes;
  return value;
}

std::string encode_target(scenert::monster_id entity) {
  std::string out;
  put(out, entity, 8);
  return out;
}

std::optional<scenert::monster_id> decode_target(std::string_view bytes) {
  std::size_t at = 0;
  if (bytes.size() != 8) return std::nullopt;
  return take(bytes, at, 8);
}

std::string encode(const hit& h) {
  std::string out;
  put(out, h.player, 8);
  put(out, h.target, 8);
  put(out, static_cast<std::uint32_t>(h.damage), 4);
  put(out, static_cast<std::uint32_t>(h.health), 4);
  return out;
}

std::optional<hit> decode_hit(std::string_view bytes) {
  if (bytes.size() != 24) return std::nullopt;
  std::size_t at = 0;
  hit h;
  h.player = *take(bytes, at, 8);
  h.target = *take(bytes, at, 8);
  h.damage = static_cast<std::int32_t>(static_cast<std::uint32_t>(*take(bytes, at, 4)));
  h.health = static_cast<std::int32_t>(static_cast<std::uint32_t>(*take(bytes, at, 4)));
  return h;
}

}  // namespace dungeon
