#!/usr/bin/env python3
"""End-to-end tests of `scenert check`: exit codes, stdout/stderr contents, --json. Run through
tests/harness: check_cli_test.py --scenert PATH --source DIR --work DIR [--case NAME]."""
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "harness"))
import scenert_harness as harness  # noqa: E402
from scenert_harness import cfg  # noqa: E402


def root():
    return pathlib.Path(cfg.source)


def expected_stderr(table):
    """The .expected lines (`/pointer: reason`, `L:C: reason` or `reason`) prefixed with the file name."""
    lines = table.with_suffix(".expected").read_text(encoding="utf-8").splitlines()
    return [f"{table}:{l}" if l[:1] == "/" or l[:1].isdigit() else f"{table}: {l}" for l in lines if l]


def bad_tables():
    return sorted((root() / "tests/data/bad").glob("*.json")) + sorted(
        (root() / "tests/data/bad_semantic").glob("*.json"))


class CheckCommand(harness.Case):
    def test_accepts_every_example_and_prints_a_summary(self):
        for table in sorted((root() / "examples").glob("*.json")):
            code, out, err = self.run_scenert("check", table)
            self.assertEqual(code, 0, err)
            self.assertEqual(err, "")
            self.assertIn("valid scene table", out)
            doc = json.loads(table.read_text())
            for scene in doc["scenes"]:
                self.assertIn(scene["name"], out)

    def test_summary_shows_slots_areas_and_view(self):
        code, out, _ = self.run_scenert("check", root() / "examples/mmo.json")
        self.assertEqual(code, 0)
        row = next(l for l in out.splitlines() if "Sunken Crypt" in l)
        self.assertRegex(row, r"dungeon\s+group\s+5\s+0\.\.2000 \(fill_first; party instances\)\s+20\s+10 Hz\s+5\s+8x6\s+3x3")
        row = next(l for l in out.splitlines() if "Trial of the Lone Blade" in l)
        self.assertRegex(row, r"0\.\.5000 \(fill_first\)\s")

    def test_json_summary_has_slots_areas_and_view(self):
        code, out, _ = self.run_scenert("check", root() / "examples/mmo.json", "--json")
        self.assertEqual(code, 0)
        summary = json.loads(out)
        self.assertEqual(summary["status"], "ok")
        slots = {s["id"]: s["group_slots"] for s in summary["scenes"]}
        self.assertEqual((slots[3001], slots[3002], slots[3003], slots[1001]), (100, 20, 10, None))
        instances = {s["id"]: s["instances"] for s in summary["scenes"]}
        self.assertEqual((instances[3001], instances[3002], instances[3003], instances[1001]),
                         ("shared", "party", "both", None))
        marsh = next(m for m in summary["maps"] if m["id"] == 3)
        self.assertEqual((marsh["areas"], marsh["view"]), ([32, 43], [5, 5]))

    def test_rejects_each_bad_table_with_every_error_on_stderr(self):
        tables = bad_tables()
        self.assertGreater(len(tables), 10)
        for table in tables:
            with self.subTest(table=table.name):
                code, out, err = self.run_scenert("check", table)
                self.assertEqual(code, 1)
                self.assertEqual(out, "")
                self.assertEqual(err.splitlines(), expected_stderr(table))

    def test_json_errors_go_to_stdout_and_stderr(self):
        table = root() / "tests/data/bad/unknown_keys.json"
        code, out, err = self.run_scenert("check", table, "--json")
        self.assertEqual(code, 1)
        report = json.loads(out)
        self.assertEqual(report["status"], "invalid")
        self.assertEqual([e["message"] for e in report["errors"]], expected_stderr(table))
        self.assertIn({"pointer": "/scenes/0/capcity", "reason": 'unknown key; did you mean "capacity"?',
                       "message": f'{table}:/scenes/0/capcity: unknown key; did you mean "capacity"?'}, report["errors"])
        self.assertEqual(err.splitlines(), expected_stderr(table))

    def test_syntax_errors_carry_line_and_column_in_json(self):
        code, out, _ = self.run_scenert("check", root() / "tests/data/bad/syntax_error.json", "--json")
        self.assertEqual(code, 1)
        error = json.loads(out)["errors"][0]
        self.assertEqual((error["line"], error["column"]), (4, 80))

    def test_unreadable_files_exit_2(self):
        for path in (root() / "tests/data/no-such-table.json", root() / "tests/data"):
            code, out, err = self.run_scenert("check", path)
            self.assertEqual(code, 2, path)
            self.assertIn("cannot read", err)
        code, out, _ = self.run_scenert("check", root() / "tests/data/no-such-table.json", "--json")
        self.assertEqual((code, json.loads(out)["status"]), (2, "unreadable"))

    def test_usage_errors_exit_2(self):
        for args in ([], ["check"], ["check", "--bogus", root() / "examples/small.json"], ["frobnicate"],
                     ["check", root() / "examples/small.json", "extra"]):
            with self.subTest(args=args):
                code, out, err = self.run_scenert(*args)
                self.assertEqual(code, 2)
                self.assertNotEqual(err, "")

    def test_help_exits_0(self):
        for args in (["--help"], ["check", "--help"]):
            code, out, _ = self.run_scenert(*args)
            self.assertEqual(code, 0)
            self.assertIn("Usage", out)
        self.assertIn("--json", self.run_scenert("check", "--help")[1])


if __name__ == "__main__":
    harness.main()
