#pragma once
/// Static data of one map: geometry and per-cell flags. Built once, immutable, shared through
/// std::shared_ptr<const map_data> by every line and phase that runs on the map.

#include <cstdint>
#include <memory>
#include <vector>

#include <scenert/scene/grid/types.hpp>

namespace scenert::grid {

/// Static per-cell flags set by the map's designer.
enum cell_flag : std::uint8_t {
  cell_block = 1,      ///< physical block: nothing that tests blocks stands here
  cell_safe_zone = 2,  ///< no fighting
  cell_free_pvp = 4,   ///< free attack
};

/// What a map is made of; validated by map_data::create.
struct map_spec {
  std::uint32_t width = 0;               ///< cells along x
  std::uint32_t height = 0;              ///< cells along y
  std::uint32_t area_width = 0;          ///< cells per area along x
  std::uint32_t area_height = 0;         ///< cells per area along y
  std::uint32_t eyesight_x = 1;          ///< view radius in areas along x (1 = 9-grid)
  std::uint32_t eyesight_y = 1;          ///< view radius in areas along y
  std::vector<std::uint8_t> cell_flags;  ///< empty, or width * height cell_flag bits, row-major
};

/// Immutable geometry and cell flags of one map.
/// Thread-safety: immutable after create, safe to share between threads.
class map_data {
  struct private_tag {};

 public:
  /// Validates a spec: sizes and radii > 0, width * height < 2^32, flags sized to the map.
  static grid_result<std::shared_ptr<const map_data>> create(map_spec spec);

  /// Use create(); public only for std::make_shared.
  map_data(private_tag, map_spec spec);

  std::uint32_t width() const noexcept { return spec_.width; }                      ///< cells along x
  std::uint32_t height() const noexcept { return spec_.height; }                    ///< cells along y
  std::uint32_t area_width() const noexcept { return spec_.area_width; }            ///< cells per area, x
  std::uint32_t area_height() const noexcept { return spec_.area_height; }          ///< cells per area, y
  std::uint32_t eyesight_x() const noexcept { return spec_.eyesight_x; }            ///< view radius, x
  std::uint32_t eyesight_y() const noexcept { return spec_.eyesight_y; }            ///< view radius, y
  std::uint32_t areas_x() const noexcept { return areas_x_; }                       ///< areas along x
  std::uint32_t areas_y() const noexcept { return areas_y_; }                       ///< areas along y
  std::uint32_t area_count() const noexcept { return areas_x_ * areas_y_; }         ///< areas in all
  std::uint32_t cell_count() const noexcept { return spec_.width * spec_.height; }  ///< cells in all

  /// Whether a cell lies on the map.
  bool contains(cell_point c) const noexcept { return c.x < spec_.width && c.y < spec_.height; }
  /// Row-major index of a cell on the map.
  std::uint32_t cell_index(cell_point c) const noexcept { return c.y * spec_.width + c.x; }
  /// Static flags of a cell on the map.
  std::uint8_t flags(cell_point c) const noexcept { return flags_.empty() ? 0 : flags_[cell_index(c)]; }
  /// Whether a cell on the map is a physical block.
  bool is_block(cell_point c) const noexcept { return (flags(c) & cell_block) != 0; }
  /// The area holding a cell on the map.
  area_point area_of(cell_point c) const noexcept { return {area_x_[c.x], area_y_[c.y]}; }
  /// Flat index (y * areas_x + x) of the area holding a cell on the map.
  std::uint32_t area_index(cell_point c) const noexcept { return area_y_[c.y] * areas_x_ + area_x_[c.x]; }
  /// Cell column -> area column, width() entries (for hot loops that skip the bound checks).
  const std::uint32_t* area_x_table() const noexcept { return area_x_.data(); }
  /// Cell row -> area row, height() entries.
  const std::uint32_t* area_y_table() const noexcept { return area_y_.data(); }
  /// Cell row -> flat index of the first area of its area row (area row * areas_x()), height() entries.
  const std::uint32_t* area_row_start_table() const noexcept { return area_row_start_.data(); }
  /// Area coordinates of a flat area index.
  area_point area_at(std::uint32_t index) const noexcept { return {index % areas_x_, index / areas_x_}; }

 private:
  map_spec spec_;
  std::uint32_t areas_x_ = 0;
  std::uint32_t areas_y_ = 0;
  std::vector<std::uint8_t> flags_;
  // Cell column -> area column and cell row -> area row: a table lookup is cheaper than a division
  // on every move, and both tables stay small (one entry per column / row).
  std::vector<std::uint32_t> area_x_;
  std::vector<std::uint32_t> area_y_;
  std::vector<std::uint32_t> area_row_start_;
};

}  // namespace scenert::grid
