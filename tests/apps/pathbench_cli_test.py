#!/usr/bin/env python3
"""End-to-end tests of `scenert pathbench` on the Moving AI arena map: every scenario exact, a wrong
length named with exit 3, bad files with exit 2. Run through tests/harness:
pathbench_cli_test.py --scenert PATH --source DIR --work DIR [--case NAME]."""
import json
import os
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "harness"))
import scenert_harness as harness  # noqa: E402
from scenert_harness import cfg  # noqa: E402


def arena():
    data = pathlib.Path(cfg.source) / "tests/data/movingai"
    return data / "arena.map", data / "arena.map.scen"


class PathbenchCommand(harness.Case):
    def test_every_arena_scenario_is_exact_with_both_searches(self):
        m, s = arena()
        report = os.path.join(self.work, "report.json")
        code, out, err = self.run_scenert("pathbench", m, s, "--repeat", "1", "--report", report)
        self.assertEqual(code, 0, err)
        self.assertEqual(err, "")
        self.assertRegex(out, r"\n\s+all\s+130 \|")
        doc = json.loads(pathlib.Path(report).read_text())
        self.assertEqual((doc["scenarios"], doc["failures"]), (130, []))
        self.assertEqual((doc["total"]["astar"]["paths"], doc["total"]["jps"]["paths"]), (130, 130))
        self.assertGreater(doc["total"]["jps_speedup"], 1.0)

    def test_sliced_searches_equal_unsliced_ones(self):
        m, s = arena()
        code, out, err = self.run_scenert("pathbench", m, s, "--algo", "jps", "--budget", "7", "--repeat", "1",
                                          "--json")
        self.assertEqual(code, 0, err)
        doc = json.loads(out)
        self.assertEqual((doc["budget"], doc["total"]["jps"]["paths"], doc["failures"]), (7, 130, []))
        self.assertNotIn("astar", doc["total"])

    def test_a_wrong_length_is_named_and_exits_3(self):
        m, s = arena()
        rows = s.read_text().splitlines()
        fields = rows[5].split("\t")
        fields[-1] = str(float(fields[-1]) + 1.0)  # one scenario claims a longer optimum
        rows[5] = "\t".join(fields)
        bad = pathlib.Path(self.work) / "arena.map.scen"
        bad.write_text("\n".join(rows) + "\n")
        code, _, err = self.run_scenert("pathbench", m, bad, "--repeat", "1")
        self.assertEqual(code, 3, err)
        self.assertIn(f"{fields[4]} {fields[5]}", err.replace(",", " ").replace("(", " ").replace(")", " ") + " ")

    def test_unreadable_or_malformed_files_exit_2(self):
        m, s = arena()
        broken = pathlib.Path(self.work) / "broken.map"
        broken.write_text("type octile\nheight 2\nwidth 3\nmap\n...\n")  # one row short
        self.check_exits([
            (("pathbench", pathlib.Path(self.work) / "missing.map", s), 2, "missing.map"),
            (("pathbench", broken, s), 2, "broken.map"),
            (("pathbench", m, s, "--algo", "dijkstra"), 2, "--algo"),
        ])


if __name__ == "__main__":
    harness.main()
