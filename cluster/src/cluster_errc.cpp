#include <scenert/cluster/cluster_errc.hpp>

#include <array>

namespace scenert::cluster {

namespace {
constexpr std::array<std::string_view, static_cast<std::size_t>(cluster_errc::count_)> names{
    "unavailable", "conflict", "not_found", "bad_record", "fenced", "full", "bad_name"};
}  // namespace

std::string_view to_string(cluster_errc code) noexcept {
  const auto i = static_cast<std::size_t>(code);
  return i < names.size() ? names[i] : "unknown";
}

}  // namespace scenert::cluster
