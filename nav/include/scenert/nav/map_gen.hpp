#pragma once
/// Generated maps of four kinds, for tests, benches and studios' own load tests; deterministic per
/// seed on every platform (own random source, no std:: distributions).

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace scenert::nav {

/// The kinds of generated map.
enum class map_kind : std::uint8_t {
  open,    ///< a few small rectangular obstacles on an open floor
  random,  ///< each cell blocked with the given density
  rooms,   ///< square rooms separated by walls, doors between neighbouring rooms
  maze,    ///< a perfect maze (one way between any two cells) of corridors of the given width
};

/// Name of a kind ("open", "random", "rooms", "maze").
const char* to_string(map_kind kind) noexcept;
/// The kind of a name, none for an unknown name.
std::optional<map_kind> parse_map_kind(std::string_view name) noexcept;

/// How to generate a map.
struct map_spec {
  map_kind kind = map_kind::open;  ///< what to build
  std::uint32_t width = 64;        ///< columns
  std::uint32_t height = 64;       ///< rows
  std::uint64_t seed = 1;          ///< same seed, same map
  double density = 0.2;            ///< random: the share of blocked cells
  std::uint32_t room = 16;         ///< rooms: a room's side in cells, wall included
  std::uint32_t corridor = 1;      ///< maze: corridor width in cells
};

/// The blocked bytes of a generated map, row-major (1 = blocked), ready for nav_map::create.
std::vector<std::uint8_t> generate_blocks(const map_spec& spec);

/// A small deterministic random source (splitmix64).
class nav_random {
 public:
  /// A source seeded with `seed`.
  explicit nav_random(std::uint64_t seed) : state_(seed) {}
  /// The next 64 random bits.
  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// A number in [0, bound) (bound > 0).
  std::uint32_t below(std::uint32_t bound) noexcept {
    return static_cast<std::uint32_t>((next() >> 32) * bound >> 32);
  }
  /// A number in [0, 1).
  double unit() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

}  // namespace scenert::nav
