// Every table in tests/data/bad and tests/data/bad_semantic is rejected with exactly the lines of its
// sidecar .expected file (`/json/pointer: reason`, or `LINE:COLUMN: reason` for syntax errors).
#include <scenert/config/table_loader.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace scenert {
namespace {

namespace fs = std::filesystem;
const fs::path data_dir = fs::path{SCENERT_SOURCE_DIR} / "tests/data";

std::vector<std::string> read_lines(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

std::vector<fs::path> tables_in(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

void expect_rejected_as_listed(const fs::path& dir) {
  const auto tables = tables_in(dir);
  ASSERT_GE(tables.size(), 3u) << dir;
  for (const auto& table : tables) {
    SCOPED_TRACE(table.string());
    const fs::path expected = fs::path(table).replace_extension(".expected");
    ASSERT_TRUE(fs::exists(expected)) << "each bad table names its expected diagnostics in " << expected;
    const auto r = load_table_file(table);
    EXPECT_EQ(r.status, load_status::invalid);
    std::vector<std::string> got;
    for (const auto& d : r.diagnostics) got.push_back(format_diagnostic(d));
    EXPECT_EQ(got, read_lines(expected));
  }
}

TEST(BadTables, SchemaExpressibleErrorsAreReportedAsListed) { expect_rejected_as_listed(data_dir / "bad"); }

TEST(BadTables, LoaderOnlyErrorsAreReportedAsListed) { expect_rejected_as_listed(data_dir / "bad_semantic"); }

}  // namespace
}  // namespace scenert
