#include <scenert/scene/grid/map_data.hpp>

#include <cstdint>
#include <string>
#include <utility>

namespace scenert::grid {
namespace {

std::string size_text(const map_spec& s) {
  return "map " + std::to_string(s.width) + "x" + std::to_string(s.height) + " cells, area " +
         std::to_string(s.area_width) + "x" + std::to_string(s.area_height) + ", eyesight " +
         std::to_string(s.eyesight_x) + "x" + std::to_string(s.eyesight_y);
}

grid_result<void> validate(const map_spec& s) {
  if (s.width == 0 || s.height == 0)
    return fail(grid_errc::invalid_geometry, size_text(s) + ": width and height must be >= 1");
  if (s.area_width == 0 || s.area_height == 0)
    return fail(grid_errc::invalid_geometry, size_text(s) + ": area width and height must be >= 1");
  if (s.eyesight_x == 0 || s.eyesight_y == 0)
    return fail(grid_errc::invalid_geometry, size_text(s) + ": eyesight radius must be >= 1 area");
  if (static_cast<std::uint64_t>(s.width) * s.height > UINT32_MAX)
    return fail(grid_errc::map_too_large, size_text(s) + ": more than 2^32 - 1 cells");
  const std::uint64_t cells = static_cast<std::uint64_t>(s.width) * s.height;
  if (!s.cell_flags.empty() && s.cell_flags.size() != cells)
    return fail(grid_errc::invalid_geometry, size_text(s) + ": cell_flags holds " +
                                                 std::to_string(s.cell_flags.size()) + " entries, expected " +
                                                 std::to_string(cells));
  return {};
}

}  // namespace

grid_result<std::shared_ptr<const map_data>> map_data::create(map_spec spec) {
  if (auto ok = validate(spec); !ok) return ok.error();
  return std::shared_ptr<const map_data>(std::make_shared<const map_data>(private_tag{}, std::move(spec)));
}

map_data::map_data(private_tag, map_spec spec) : spec_(std::move(spec)) {
  flags_ = std::move(spec_.cell_flags);
  spec_.cell_flags.clear();
  areas_x_ = (spec_.width + spec_.area_width - 1) / spec_.area_width;
  areas_y_ = (spec_.height + spec_.area_height - 1) / spec_.area_height;
  area_x_.resize(spec_.width);
  area_y_.resize(spec_.height);
  for (std::uint32_t x = 0; x < spec_.width; ++x) area_x_[x] = x / spec_.area_width;
  for (std::uint32_t y = 0; y < spec_.height; ++y) area_y_[y] = y / spec_.area_height;
  area_row_start_.resize(spec_.height);
  for (std::uint32_t y = 0; y < spec_.height; ++y) area_row_start_[y] = area_y_[y] * areas_x_;
}

}  // namespace scenert::grid
