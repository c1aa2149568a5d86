#!/usr/bin/python3
"""The installed `scenert run --web` serves the pages of its install tree, not of the source tree.

Run through tests/harness with the installed binary:
    installed_pages.py --scenert PREFIX/bin/scenert --source DIR --work DIR
Starts it on a free loopback port, fetches the pages, the .proto files and the npm scripts, compares
each with its installed file, stops the server with SIGTERM and checks it exited 0.
"""
import os
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "harness"))
import scenert_harness as harness  # noqa: E402
from scenert_harness import cfg, check  # noqa: E402


class InstalledPages(harness.Case):
    def test_serves_the_install_trees_pages(self):
        prefix = os.path.dirname(os.path.dirname(os.path.abspath(cfg.scenert)))
        web = os.path.join(prefix, "share", "scenert", "web")
        server = self.scenert("server", "run", os.path.join(cfg.source, "examples", "small.json"),
                              "--web", "127.0.0.1:0")
        m = server.wait_for_line(r"web pages on http://127\.0\.0\.1:(\d+)/ \(\d+ files from (.*)\)", 20)
        port, root = int(m.group(1)), m.group(2)
        check(os.path.realpath(root) == os.path.realpath(web),
              f"the pages come from {root}, not the install tree {web}")
        for path, file in (("/", "play.html"), ("/dashboard.html", "dashboard.html"), ("/play.js", "play.js"),
                           ("/proto/scenert.proto", "proto/scenert.proto"),
                           ("/vendor/protobuf.min.js", "vendor/protobuf.min.js"),
                           ("/vendor/chart.umd.js", "vendor/chart.umd.js")):
            status, body = harness.http_get(port, path, raw=True)
            with open(os.path.join(web, file), "rb") as f:
                check(status == 200 and body == f.read(), f"GET {path} is not the installed {file} ({status})")
        server.stop(want=0, deadline=10)
        harness.report(f"installed_pages: {root} served on port {port}: pages, protos and vendor scripts")


if __name__ == "__main__":
    harness.main()
