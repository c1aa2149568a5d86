"""The scripts' pinning (scripts/pinning.py) and the server's cost table (scripts/server_cost.py):
which cores go to whom, every thread's affinity read back and checked, and the cost per frame,
per client and per move."""
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import pinning  # noqa: E402
import server_cost  # noqa: E402


def fake_proc(root, pid, threads):
    """A /proc with process `pid` whose threads are {tid: (name, cpu list)}."""
    for tid, (name, cores) in threads.items():
        d = os.path.join(root, str(pid), "task", str(tid))
        os.makedirs(d)
        with open(os.path.join(d, "status"), "w") as f:
            f.write(f"Name:\t{name}\nState:\tS (sleeping)\nCpus_allowed:\t1\nCpus_allowed_list:\t{cores}\n")


class PinningTest(unittest.TestCase):
    def test_two_cores_or_more_pin_the_server_and_the_bots_apart_one_core_pins_nothing(self):
        self.assertIsNone(pinning.plan(1))
        self.assertEqual(pinning.plan(2), ("0", "1"))
        self.assertEqual(pinning.plan(16), ("0", "1"))
        self.assertEqual(pinning.announce(("0", "1")), "server pinned to core 0, bots to core 1")
        self.assertIn("not pinned", pinning.announce(None))

    def test_a_pinned_command_runs_under_taskset(self):
        self.assertEqual(pinning.pinned(["scenert", "run"], None), ["scenert", "run"])
        self.assertEqual(pinning.pinned(["scenert", "run"], "0"), ["taskset", "-c", "0", "scenert", "run"])

    def test_cpu_lists_are_read_as_the_kernel_writes_them(self):
        self.assertEqual(pinning.parse_cpu_list("0-2,5\n"), {0, 1, 2, 5})
        self.assertEqual(pinning.parse_cpu_list("1"), {1})

    def test_a_thread_that_may_run_elsewhere_is_named(self):
        with tempfile.TemporaryDirectory() as proc:
            fake_proc(proc, 42, {42: ("scenert", "0"), 43: ("scenert-io", "0"), 44: ("tbb-worker", "0-1")})
            ok, line = pinning.check("scenert run", 42, "0", proc)
            self.assertFalse(ok)
            self.assertIn("1 of 3 threads not on core 0: tbb-worker (44) on [0, 1]", line)
            ok, line = pinning.check("scenert run", 42, "0-1", proc)
            self.assertFalse(ok)
            ok, line = pinning.check("gone", 7, "0", proc)
            self.assertFalse(ok)
            self.assertIn("gone", line)

    def test_every_thread_of_a_pinned_process_inherits_its_core(self):
        if pinning.usable_cores() < 2:
            self.skipTest("one core: nothing is pinned")
        code = "import threading,sys;threading.Thread(target=sys.stdin.read).start();print('ready',flush=True)"
        child = subprocess.Popen(pinning.pinned([sys.executable, "-c", code], "1"), stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(child.stdout.readline().strip(), "ready")
            ok, line = pinning.check("child", child.pid, "1")
            self.assertTrue(ok, line)
            self.assertIn("all 2 threads on core 1", line)
            self.assertFalse(pinning.check("child", child.pid, "0")[0])
        finally:
            child.stdin.close()
            child.wait(timeout=10)


class ServerCostTest(unittest.TestCase):
    def test_the_counters_and_the_moves_are_read_from_metrics(self):
        text = ('scenert_net_frames_out_total 1000\nscenert_net_bytes_out_total 64000\n'
                'scenert_net_connections 20\n'
                'scenert_net_message_frames_in_total{message="position"} 30\n'
                'scenert_net_message_frames_in_total{message="walk"} 70\n'
                'scenert_net_message_frames_in_total{message="heartbeat"} 500\n')
        self.assertEqual(server_cost.parse_metrics(text), {
            "frames_out_total": 1000, "bytes_out_total": 64000, "connections": 20, "moves": 100})

    def test_the_cost_per_frame_per_client_and_per_move(self):
        f = server_cost.figures(cpu_s=2.0, seconds=10, frames=1_000_000, moves=40_000, mean_clients=1000)
        self.assertEqual(f["cpu_ns_per_frame"], 2000.0)
        self.assertEqual(f["cpu_us_per_client_s"], 200.0)  # 0.2 of a core over 1,000 clients
        self.assertEqual(f["cpu_us_per_move"], 50.0)
        self.assertEqual(f["server_core_share"], 0.2)
        self.assertIn("per delivered frame       2000.0 ns", server_cost.table(f))
        self.assertIsNone(server_cost.figures(1.0, 10, 0, 0, 0)["cpu_ns_per_frame"])

    def test_each_core_is_read_busy_from_proc_stat(self):
        with tempfile.TemporaryDirectory() as proc:
            with open(os.path.join(proc, "stat"), "w") as f:
                f.write("cpu  10 0 10 80 0 0 0 0 0 0\ncpu0 5 0 5 40 0 0 0 0 0 0\ncpu1 5 0 5 30 10 0 0 0 0 0\n")
            before = server_cost.core_ticks(proc)
            self.assertEqual(before, {0: (10, 50), 1: (10, 50)})
            after = {0: (100, 150), 1: (20, 150)}
            self.assertEqual(server_cost.core_shares(before, after), {0: 0.9, 1: 0.1})
        f = server_cost.figures(0.6, 10, 100, 10, 10) | {"cores": [("the server's", 0, 0.9), ("the bots'", 1, 0.1)]}
        self.assertIn("core 0 (the server's) 0.9 busy, 0.06 of it the server", server_cost.table(f))
        self.assertIn("core 1 (the bots') 0.1 busy", server_cost.table(f))

    def test_the_wait_for_a_core_adds_up_every_thread(self):
        with tempfile.TemporaryDirectory() as proc:
            for tid, waited in ((9, 1_500_000_000), (10, 500_000_000)):
                d = os.path.join(proc, "9", "task", str(tid))
                os.makedirs(d)
                with open(os.path.join(d, "schedstat"), "w") as f:
                    f.write(f"123 {waited} 4\n")
            self.assertEqual(server_cost.wait_seconds(9, proc), 2.0)
        self.assertGreaterEqual(server_cost.wait_seconds(os.getpid()), 0)


if __name__ == "__main__":
    unittest.main()
