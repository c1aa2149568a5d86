#pragma once
/// A map's blocked cells as 1006 carries them (row runs, docs/protocol.md "Maps on the wire") and the
/// map's digest, by which a client that holds a map is not sent its blocks again.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <scenert/net/frame.hpp>
#include <scenert/runtime/result.hpp>

namespace scenert::net {

/// The most digests a login may announce (a longer list is a bad frame, never a crash).
inline constexpr std::size_t max_known_maps = 64;
/// The most cells a client decodes a map of (a bitset of 128 MiB): a larger size is an error.
inline constexpr std::uint64_t max_wire_cells = std::uint64_t{1} << 30;

/// Blocked cells, one bit per cell, row-major, lowest bit first (cell (x, y) is bit y * width + x):
/// the form a client walks on, and the oracle the row runs are tested against.
using block_bits = std::string;

/// Row runs of a `width` x `height` map's `bits`: groups of identical consecutive rows, each group
/// `repeat, n, run_1 .. run_n`, the runs alternating free and blocked cells from x = 0 (a free run
/// first, 0 when the row starts blocked); cells past the last run are free. The shortest such form:
/// maximal groups, no trailing free run, no empty run but the first. `bits` holds width * height bits.
[[nodiscard]] std::vector<std::uint32_t> encode_block_rows(std::uint32_t width, std::uint32_t height,
                                                           std::string_view bits);

/// The bits of row runs for a `width` x `height` map; bad_payload naming the value and the reason for
/// runs that do not cover exactly the map's rows within its width (any input: never a crash).
[[nodiscard]] result<block_bits, wire_errc> decode_block_rows(std::uint32_t width, std::uint32_t height,
                                                              std::span<const std::uint32_t> rows);

/// The static data of a map that its digest covers besides its blocks.
struct map_shape {
  std::uint32_t width = 0, height = 0;            ///< cells
  std::uint32_t area_width = 0, area_height = 0;  ///< cells per area
  std::uint32_t eyesight_x = 1, eyesight_y = 1;   ///< areas seen each way
};

/// Bytes the row runs take in a packed protobuf field (a varint each).
[[nodiscard]] std::size_t packed_size(std::span<const std::uint32_t> rows);

/// A map's blocks as 1006 carries them: row runs, or one bit per cell when that is shorter (a map
/// of noise, as Moving AI's random maps; each row's runs take about a byte per run).
struct wire_blocks {
  std::vector<std::uint32_t> rows;  ///< row runs (empty when `bits` is sent)
  block_bits bits;                  ///< one bit per cell (empty when `rows` is sent)
};

/// The shorter form of `bits` (`rows` its row runs): the runs unless the bitset takes fewer bytes.
[[nodiscard]] wire_blocks shorter_form(std::uint32_t width, std::uint32_t height, std::string_view bits,
                                       std::vector<std::uint32_t> rows);

/// The bits of either form for a `width` x `height` map: `bits` when not empty (it must hold exactly
/// the map's bytes), else the row runs; bad_payload naming the reason.
[[nodiscard]] result<block_bits, wire_errc> decode_blocks(std::uint32_t width, std::uint32_t height,
                                                          std::span<const std::uint32_t> rows,
                                                          std::string_view bits);

/// The map's digest: FNV-1a 64 over the shape's six values then the row runs, each a little-endian
/// uint32 (never 0: 0 says "no digest"). Stable across builds and machines; clients only compare it.
[[nodiscard]] std::uint64_t map_digest(const map_shape& shape, std::span<const std::uint32_t> block_rows);

/// A digest as 1006 and 1000 carry it: 8 bytes, most significant first (a browser keeps it whole).
[[nodiscard]] std::string digest_bytes(std::uint64_t digest);
/// The digest of 8 such bytes; bad_payload for any other length.
[[nodiscard]] result<std::uint64_t, wire_errc> digest_of_bytes(std::string_view bytes);

}  // namespace scenert::net
