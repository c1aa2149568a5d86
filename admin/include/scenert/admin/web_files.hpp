#pragma once
/// The web pages' files for `scenert run --web`: the pages, the .proto files they decode frames with
/// and the third-party scripts scripts/setup.sh installs (protobufjs, Chart.js), read once at start
/// and served from memory, so a request never waits on the disk.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <scenert/runtime/result.hpp>

#include <scenert/admin/server.hpp>

namespace scenert::admin {

enum class web_errc : std::uint8_t { ok, no_pages, count_ };

/// Where the pages are by default: the install tree beside the binary (PREFIX/share/scenert/web),
/// else the source tree the binary was built from.
[[nodiscard]] std::filesystem::path default_web_root();

class web_files {
 public:
  /// Reads the pages of `root` (its own files, not its folders), the .proto files of `root`/proto
  /// (else of the source tree) and the third-party scripts (`root`/vendor, else `root`/node_modules).
  /// no_pages: `root` has no play.html. A missing third-party script is listed in missing().
  [[nodiscard]] static result<web_files, web_errc> load(const std::filesystem::path& root);

  /// The file a GET of `path` answers ("/" is play.html); null: none.
  [[nodiscard]] const admin_response* find(std::string_view path) const;
  /// The third-party scripts that were not found (the pages cannot decode frames or draw charts).
  [[nodiscard]] const std::vector<std::string>& missing() const noexcept { return missing_; }
  [[nodiscard]] std::size_t size() const noexcept { return files_.size(); }

 private:
  std::map<std::string, admin_response, std::less<>> files_;
  std::vector<std::string> missing_;
};

}  // namespace scenert::admin
