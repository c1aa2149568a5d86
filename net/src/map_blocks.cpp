// A map's blocks as row runs, and its digest (docs/protocol.md, "Maps on the wire").
#include <scenert/net/map_blocks.hpp>

#include <fmt/format.h>

namespace scenert::net {
namespace {

bool bit_at(std::string_view bits, std::uint64_t i) {
  return (static_cast<unsigned char>(bits[i / 8]) >> (i % 8) & 1U) != 0;
}

// One row's runs, free first; the trailing free run is never written.
void runs_of_row(std::string_view bits, std::uint64_t first, std::uint32_t width,
                 std::vector<std::uint32_t>& runs) {
  runs.clear();
  bool blocked = false;
  std::uint32_t start = 0;
  for (std::uint32_t x = 0; x < width; ++x) {
    if (bit_at(bits, first + x) == blocked) continue;
    runs.push_back(x - start);
    start = x, blocked = !blocked;
  }
  if (blocked) runs.push_back(width - start);
}

void put_group(std::vector<std::uint32_t>& out, std::uint32_t repeat,
               const std::vector<std::uint32_t>& runs) {
  out.push_back(repeat);
  out.push_back(static_cast<std::uint32_t>(runs.size()));
  out.insert(out.end(), runs.begin(), runs.end());
}

void set_bits(block_bits& bits, std::uint64_t from, std::uint32_t count) {
  for (std::uint64_t i = from; i < from + count; ++i)
    bits[i / 8] = static_cast<char>(static_cast<unsigned char>(bits[i / 8]) | (1U << (i % 8)));
}

// Checks one group's runs (at rows[at], n of them) against the width; empty when they fit.
std::string runs_problem(std::span<const std::uint32_t> rows, std::size_t at, std::uint32_t n,
                         std::uint32_t width) {
  std::uint64_t x = 0;
  for (std::uint32_t k = 0; k < n; ++k) {
    const std::uint32_t run = rows[at + k];
    if (k > 0 && run == 0) return fmt::format("value {}: an empty run after the first of its row", at + k);
    x += run;
    if (x > width)
      return fmt::format("value {}: the row's runs reach x = {}, past the width {}", at + k, x, width);
  }
  return {};
}

constexpr std::uint64_t fnv_offset = 0xcbf29ce484222325ULL, fnv_prime = 0x100000001b3ULL;

void fnv_u32(std::uint64_t& h, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) {
    h ^= (v >> (8 * i)) & 0xffU;
    h *= fnv_prime;
  }
}

}  // namespace

std::vector<std::uint32_t> encode_block_rows(std::uint32_t width, std::uint32_t height,
                                             std::string_view bits) {
  std::vector<std::uint32_t> out, previous, current;
  std::uint32_t repeat = 0;
  for (std::uint32_t y = 0; y < height; ++y) {
    runs_of_row(bits, std::uint64_t{y} * width, width, current);
    if (repeat > 0 && current == previous) {
      ++repeat;
      continue;
    }
    if (repeat > 0) put_group(out, repeat, previous);
    previous.swap(current);
    repeat = 1;
  }
  if (repeat > 0) put_group(out, repeat, previous);
  return out;
}

result<block_bits, wire_errc> decode_block_rows(std::uint32_t width, std::uint32_t height,
                                                std::span<const std::uint32_t> rows) {
  const std::uint64_t cells = std::uint64_t{width} * height;
  if (cells == 0 || cells > max_wire_cells)
    return fail(wire_errc::bad_payload, fmt::format("block rows: a map of {} x {} cells (1 to {} allowed)",
                                                    width, height, max_wire_cells));
  block_bits bits((cells + 7) / 8, '\0');
  std::uint64_t y = 0;
  for (std::size_t at = 0; at < rows.size();) {
    if (rows.size() - at < 2 || rows[at + 1] > rows.size() - at - 2)
      return fail(wire_errc::bad_payload, fmt::format("block rows: the group at value {} is cut short", at));
    const std::uint32_t repeat = rows[at], n = rows[at + 1];
    if (repeat == 0 || repeat > height - y)
      return fail(wire_errc::bad_payload,
                  fmt::format("block rows: value {}: {} rows from row {} of {}", at, repeat, y, height));
    at += 2;
    if (auto problem = runs_problem(rows, at, n, width); !problem.empty())
      return fail(wire_errc::bad_payload, "block rows: " + problem);
    for (std::uint64_t row = y; row < y + repeat; ++row) {
      std::uint64_t x = 0;
      for (std::uint32_t k = 0; k < n; ++k) {
        if (k % 2 == 1) set_bits(bits, row * width + x, rows[at + k]);
        x += rows[at + k];
      }
    }
    y += repeat, at += n;
  }
  if (y != height)
    return fail(wire_errc::bad_payload, fmt::format("block rows: cover {} rows of {}", y, height));
  return bits;
}

std::size_t packed_size(std::span<const std::uint32_t> rows) {
  std::size_t bytes = 0;
  for (std::uint32_t v : rows)
    bytes += v < (1U << 7) ? 1 : v < (1U << 14) ? 2 : v < (1U << 21) ? 3 : v < (1U << 28) ? 4 : 5;
  return bytes;
}

wire_blocks shorter_form(std::uint32_t width, std::uint32_t height, std::string_view bits,
                         std::vector<std::uint32_t> rows) {
  const std::size_t bitset_bytes = (std::uint64_t{width} * height + 7) / 8;
  if (packed_size(rows) <= bitset_bytes) return {std::move(rows), {}};
  return {{}, block_bits(bits.substr(0, bitset_bytes))};
}

result<block_bits, wire_errc> decode_blocks(std::uint32_t width, std::uint32_t height,
                                            std::span<const std::uint32_t> rows, std::string_view bits) {
  if (bits.empty()) return decode_block_rows(width, height, rows);
  const std::uint64_t cells = std::uint64_t{width} * height;
  if (!rows.empty() || cells == 0 || cells > max_wire_cells || bits.size() != (cells + 7) / 8)
    return fail(wire_errc::bad_payload,
                fmt::format("blocked bits: {} bytes (and {} row runs) for a map of {} x {} cells",
                            bits.size(), rows.size(), width, height));
  return block_bits(bits);
}

std::uint64_t map_digest(const map_shape& shape, std::span<const std::uint32_t> block_rows) {
  std::uint64_t h = fnv_offset;
  for (std::uint32_t v :
       {shape.width, shape.height, shape.area_width, shape.area_height, shape.eyesight_x, shape.eyesight_y})
    fnv_u32(h, v);
  for (std::uint32_t v : block_rows) fnv_u32(h, v);
  return h == 0 ? 1 : h;
}

std::string digest_bytes(std::uint64_t digest) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[static_cast<std::size_t>(i)] = static_cast<char>(digest >> (8 * (7 - i)) & 0xffU);
  return out;
}

result<std::uint64_t, wire_errc> digest_of_bytes(std::string_view bytes) {
  if (bytes.size() != 8)
    return fail(wire_errc::bad_payload, fmt::format("a map digest of {} bytes: 8 expected", bytes.size()));
  std::uint64_t d = 0;
  for (unsigned char c : bytes) d = d << 8 | c;
  return d;
}

}  // namespace scenert::net
