// The pages `scenert run --web` serves: read once from a folder, served by path, nothing outside it.
#include <scenert/admin/web_files.hpp>

#include <gtest/gtest.h>

#include <fstream>

namespace scenert::admin {
namespace {

namespace fs = std::filesystem;

struct web_root {
  fs::path dir =
      fs::temp_directory_path() /
      ("scenert_web_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
  web_root() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~web_root() { fs::remove_all(dir); }
  void write(const fs::path& rel, const std::string& text) const {
    fs::create_directories((dir / rel).parent_path());
    std::ofstream(dir / rel, std::ios::binary) << text;
  }
};

TEST(WebFiles, ServesThePagesOfItsRootAndNothingElse) {
  web_root r;
  r.write("play.html", "<title>play</title>");
  r.write("dashboard.js", "export {};");
  r.write("style.css", "body{}");
  r.write("package.json", "{}");              // npm's, not a page
  r.write("sub/inner.html", "<p>inner</p>");  // pages are the root's own files
  r.write("vendor/protobuf.min.js", "var protobuf;");
  auto w = web_files::load(r.dir);
  ASSERT_TRUE(w.has_value()) << w.error().message;

  const admin_response* index = w->find("/");
  ASSERT_NE(index, nullptr);
  EXPECT_EQ(index->body, "<title>play</title>");
  EXPECT_EQ(index->content_type, "text/html; charset=utf-8");
  ASSERT_NE(w->find("/play.html"), nullptr);
  ASSERT_NE(w->find("/dashboard.js"), nullptr);
  EXPECT_EQ(w->find("/dashboard.js")->content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(w->find("/style.css")->body, "body{}");
  EXPECT_EQ(w->find("/package.json"), nullptr);
  EXPECT_EQ(w->find("/sub/inner.html"), nullptr);
  EXPECT_EQ(w->find("/../play.html"), nullptr);
  EXPECT_EQ(w->find("/nothing.html"), nullptr);

  // The wire's .proto files come from the source tree when the root has none; the vendor script
  // from the root's vendor/; the one not there is named.
  const admin_response* proto = w->find("/proto/scenert.proto");
  ASSERT_NE(proto, nullptr);
  EXPECT_NE(proto->body.find("message SceneInfo"), std::string::npos);
  ASSERT_NE(w->find("/proto/seed002.proto"), nullptr);
  EXPECT_EQ(w->find("/vendor/protobuf.min.js")->body, "var protobuf;");
  EXPECT_EQ(w->find("/vendor/chart.umd.js"), nullptr);
  EXPECT_EQ(w->missing(), std::vector<std::string>{"chart.umd.js"});
}

TEST(WebFiles, ARootWithoutThePlayPageIsANamedError) {
  web_root r;
  r.write("dashboard.html", "<p>no play page</p>");
  auto w = web_files::load(r.dir);
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.code(), web_errc::no_pages);
  EXPECT_NE(w.error().message.find(r.dir.string()), std::string::npos) << w.error().message;
  EXPECT_NE(w.error().message.find("play.html"), std::string::npos) << w.error().message;

  auto none = web_files::load(r.dir / "not-there");
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.code(), web_errc::no_pages);
}

}  // namespace
}  // namespace scenert::admin
