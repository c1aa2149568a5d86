// pathbench's two renderings of one report: a table for people, one JSON object for machines.
#include <scenert/nav/pathbench.hpp>

#include <fmt/format.h>

namespace scenert::nav {
namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    else out += c;
  }
  return out + "\"";
}

std::string json_algo(const algo_figures& f) {
  return fmt::format(R"({{"paths": {}, "mean_expansions": {:.1f}, "mean_us": {:.3f}, "p50_us": {:.3f}, "p99_us": {:.3f}}})",
                     f.paths, f.mean_expansions, f.mean_us, f.p50_us, f.p99_us);
}

std::string json_bucket(const bucket_figures& b) {
  std::string out = fmt::format(R"({{"bucket": {}, "paths": {})", b.bucket, b.paths);
  if (b.astar.paths > 0) out += R"(, "astar": )" + json_algo(b.astar);
  if (b.jps.paths > 0) out += R"(, "jps": )" + json_algo(b.jps);
  if (b.speedup > 0) out += fmt::format(R"(, "jps_speedup": {:.2f})", b.speedup);
  return out + "}";
}

std::string text_algo(const algo_figures& f) {
  if (f.paths == 0) return fmt::format("{:>10} {:>9} {:>9}", "-", "-", "-");
  return fmt::format("{:>10.1f} {:>9.2f} {:>9.2f}", f.mean_expansions, f.p50_us, f.p99_us);
}

std::string text_row(const std::string& label, const bucket_figures& b) {
  const std::string speedup = b.speedup > 0 ? fmt::format("{:.2f}x", b.speedup) : "-";
  return fmt::format("{:>6} {:>6} | {} | {} | {:>8}\n", label, b.paths, text_algo(b.astar), text_algo(b.jps), speedup);
}

}  // namespace

std::string to_text(const pathbench_report& r) {
  if (!r.error.empty()) return r.error + "\n";
  std::string out = fmt::format("{} ({}x{}): {} scenarios{}\n", r.map, r.width, r.height, r.scenarios,
                                r.budget > 0 ? fmt::format(", sliced by {} expansions", r.budget) : "");
  out += fmt::format("{:>6} {:>6} | {:>10} {:>9} {:>9} | {:>10} {:>9} {:>9} | {:>8}\n", "bucket", "paths",
                     "A* exp", "p50 us", "p99 us", "JPS exp", "p50 us", "p99 us", "speedup");
  for (const auto& b : r.buckets) out += text_row(std::to_string(b.bucket), b);
  out += text_row("all", r.total);
  for (const auto& f : r.failures) out += "FAIL " + f + "\n";
  return out;
}

std::string to_json(const pathbench_report& r) {
  std::string out = fmt::format(R"({{"map": {}, "width": {}, "height": {}, "scenarios": {}, "budget": {}, "exit_code": {})",
                                json_string(r.map), r.width, r.height, r.scenarios, r.budget, r.exit_code);
  if (!r.error.empty()) return out + R"(, "error": )" + json_string(r.error) + "}";
  out += R"(, "total": )" + json_bucket(r.total) + R"(, "buckets": [)";
  for (std::size_t i = 0; i < r.buckets.size(); ++i) out += (i ? ", " : "") + json_bucket(r.buckets[i]);
  out += R"(], "failures": [)";
  for (std::size_t i = 0; i < r.failures.size(); ++i) out += (i ? ", " : "") + json_string(r.failures[i]);
  return out + "]}";
}

}  // namespace scenert::nav
