#include <scenert/admin/web_files.hpp>

#include <array>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

namespace scenert::admin {
namespace fs = std::filesystem;

namespace {

std::optional<std::string> content_type(const fs::path& file) {
  // No .json: web/'s package files are npm's, not the pages'.
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 7> types{{
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".proto", "text/plain; charset=utf-8"},
      {".png", "image/png"},
      {".svg", "image/svg+xml"},
      {".ico", "image/x-icon"},
  }};
  const std::string ext = file.extension().string();
  for (const auto& [e, type] : types)
    if (ext == e) return std::string(type);
  return std::nullopt;
}

std::optional<std::string> slurp(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return std::move(s).str();
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// The third-party scripts by the name the pages load them under, and where npm puts them.
struct vendor_script {
  std::string_view name;
  std::string_view in_node_modules;
};
constexpr std::array<vendor_script, 2> vendor_scripts{{
    {"protobuf.min.js", "protobufjs/dist/protobuf.min.js"},
    {"chart.umd.js", "chart.js/dist/chart.umd.js"},
}};

}  // namespace

fs::path default_web_root() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "scenert" / "web";
    if (is_file(installed / "play.html")) return installed;
  }
  return SCENERT_SOURCE_WEB_DIR;
}

result<web_files, web_errc> web_files::load(const fs::path& root) {
  if (!is_file(root / "play.html"))
    return fail(web_errc::no_pages, fmt::format("--web-root {}: no play.html there", root.string()));
  web_files w;
  auto add = [&w](std::string path, const fs::path& file) {
    auto type = content_type(file);
    auto body = type ? slurp(file) : std::nullopt;
    if (body)
      w.files_.insert_or_assign(std::move(path), admin_response{200, std::move(*type), std::move(*body)});
    return body.has_value();
  };
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec))
    if (entry.is_regular_file(ec)) add("/" + entry.path().filename().string(), entry.path());
  if (const auto* play = w.find("/play.html")) w.files_.insert_or_assign("/", *play);

  const fs::path protos =
      fs::exists(root / "proto", ec) ? root / "proto" : fs::path(SCENERT_SOURCE_PROTO_DIR);
  for (const auto& entry : fs::directory_iterator(protos, ec))
    if (entry.path().extension() == ".proto") add("/proto/" + entry.path().filename().string(), entry.path());

  for (const auto& v : vendor_scripts) {
    const std::string path = fmt::format("/vendor/{}", v.name);
    if (!add(path, root / "vendor" / v.name) && !add(path, root / "node_modules" / v.in_node_modules))
      w.missing_.emplace_back(v.name);
  }
  return w;
}

const admin_response* web_files::find(std::string_view path) const {
  auto it = files_.find(path);
  return it == files_.end() ? nullptr : &it->second;
}

}  // namespace scenert::admin
