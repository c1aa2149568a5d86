"""The installed `scenert run --web` serves the pages of its install tree, not of the source tree.

Usage: installed_pages.py PREFIX TABLE. Starts PREFIX/bin/scenert on a free loopback port, fetches the
pages, the .proto files and the npm scripts, compares each with its installed file, stops the server
with SIGTERM and checks it exited 0. Standard library only.
"""
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request


def fail(message):
    print(f"installed_pages: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def main():
    prefix, table = os.path.abspath(sys.argv[1]), sys.argv[2]
    web = os.path.join(prefix, "share", "scenert", "web")
    server = subprocess.Popen([os.path.join(prefix, "bin", "scenert"), "run", table, "--web", "127.0.0.1:0"],
                              stderr=subprocess.PIPE, text=True)
    try:
        port, seen = None, []
        deadline = time.monotonic() + 20
        while port is None and time.monotonic() < deadline:
            line = server.stderr.readline()
            if not line:
                break
            seen.append(line)
            m = re.search(r"web pages on http://127\.0\.0\.1:(\d+)/ \(\d+ files from (.*)\)", line)
            if m:
                port, root = int(m.group(1)), m.group(2)
        if port is None:
            fail("no 'web pages on' line: " + "".join(seen))
        if os.path.realpath(root) != os.path.realpath(web):
            fail(f"the pages come from {root}, not the install tree {web}")
        for path, file in (("/", "play.html"), ("/dashboard.html", "dashboard.html"), ("/play.js", "play.js"),
                           ("/proto/scenert.proto", "proto/scenert.proto"),
                           ("/vendor/protobuf.min.js", "vendor/protobuf.min.js"),
                           ("/vendor/chart.umd.js", "vendor/chart.umd.js")):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
                body = r.read()
            with open(os.path.join(web, file), "rb") as f:
                if body != f.read():
                    fail(f"GET {path} is not the installed {file}")
        print(f"installed_pages: {root} served on port {port}: pages, protos and vendor scripts")
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            code = server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            fail("the server did not stop within 10 s of SIGTERM")
    if code != 0:
        fail(f"the server exited {code} after SIGTERM")


if __name__ == "__main__":
    main()
