"""Prints the medians of scripts/bench.sh's JSON reports as one table."""
import glob
import json
import os
import statistics
import sys


def load(folder, name):
    runs = []
    for path in sorted(glob.glob(os.path.join(folder, f"{name}.*.json"))):
        with open(path) as f:
            text = f.read().strip()
        if text:
            runs.append(json.loads(text))
    return runs


def median(runs, *keys):
    values = []
    for r in runs:
        for k in keys:
            r = r.get(k, {}) if isinstance(r, dict) else {}
        if isinstance(r, (int, float)):
            values.append(r)
    return statistics.median(values) if values else float("nan")


def flatten(d, prefix=""):
    flat = {}
    for k, v in d.items():
        if isinstance(v, dict):
            flat.update(flatten(v, f"{prefix}{k}."))
        else:
            flat[f"{prefix}{k}"] = v
    return flat


def row(label, value, unit, target=""):
    print(f"  {label:<44} {value:>14,.1f} {unit:<10} {target}")


def main(folder):
    for name in ("pool_100k", "pool_1m", "pool_1m_thp"):
        runs = load(folder, name)
        if not runs:
            continue
        heap = ", heap on huge pages" if name.endswith("_thp") else ""
        print(f"{name} ({runs[0].get('services')} no-op services at {runs[0].get('hz')} Hz{heap}, median of {len(runs)})")
        row("CPU per tick", median(runs, "cpu_ns_per_tick"), "ns", "target <= 150 (100k), <= 50 (1M)")
        row("ticks per second", median(runs, "ticks_per_second"), "")
        row("lateness p50", median(runs, "lateness_p50_us"), "us", "target < 150")
        row("lateness p99", median(runs, "lateness_p99_us"), "us", "target < 500")
        row("lateness max", median(runs, "lateness_max_us"), "us", "target < 2000")
        row("ticks 2.1 ms late or more", median(runs, "ticks_late_over_2ms"), "")
        if any(r.get("wake_probe") for r in runs):
            row("platform wake max (plain thread, same run)", median(runs, "platform_wake_max_us"), "us",
                "the machine's floor")
    runs = [flatten(r) for r in load(folder, "dungeons")]
    if runs:
        print(f"dungeons (median of {len(runs)}; every number of the report)")
        for key, value in runs[0].items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                row(key, median(runs, key), "")
    for s in ("s1", "s2", "s3", "s4", "s5", "seed001"):
        runs = [r["runs"][0] for r in load(folder, f"aoi_{s}") if r.get("runs")]
        if not runs:
            continue
        print(f"aoi {s} (median of {len(runs)})")
        row("ours: moves per second", median(runs, "ours", "moves_per_sec") / 1e6, "M")
        row("ours: add", median(runs, "ours", "add_ns"), "ns", "target <= 200")
        row("speed-up vs seed 002 (list per grid)", median(runs, "speedup", "vs_seed002_list_grid"), "x")
        row("speed-up vs seed 000 (map of sets)", median(runs, "speedup", "vs_seed000_screen_index"), "x")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/bench-results")
