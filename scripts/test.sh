#!/usr/bin/env bash
# Builds and tests scenert the way CI does: a warnings-as-errors build, an ASan+UBSan build and a
# TSan build (std::thread executor: Debian's oneTBB is not built for TSan), a build with
# SCENERT_DISABLE_ASSERTS (no assert may hold a side effect), then the installed package is consumed
# by a tiny project; the fuzz stage builds the libFuzzer target with clang and replays its corpus;
# the browser stage drives the web pages in headless Chromium against the normal build; the cluster
# stage runs the cluster's tests (a real nats-server, nodes, gateways, bots) against the normal build,
# the chaos stage seeded faults on such a cluster under a thousand bots. Each stage says its time.
# Usage: scripts/test.sh [normal|cluster|chaos|browser|asan|tsan|noassert|consumer|fuzz ...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
bash "$here/setup.sh"

stages=("$@")
((${#stages[@]})) || stages=(normal cluster chaos browser asan tsan noassert consumer fuzz)

# The trees carry line tables only (-g1): sanitizer reports and backtraces keep their file:line,
# and a tree builds about a fifth faster than with full debug info.
line_tables=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_DEBUG="-g1")
normal_tree=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCENERT_WERROR=ON "${line_tables[@]}")
# The TSan and fuzz trees only run their checks: -O1 builds faster than -O2 and is what both
# sanitizers' docs suggest.
checked_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG")
tsan_tree=("${checked_flags[@]}")

passed=0
# Runs a tree's tests; a failure stops the script (set -e, pipefail). Counts what passed.
run_ctest() {
  ctest --test-dir "$1" --output-on-failure -j "$jobs" --timeout 300 "${@:2}" | tee "$1/ctest.out"
  local n
  n=$(sed -n 's/.* 0 tests failed out of \([0-9]*\)$/\1/p' "$1/ctest.out" | tail -n 1)
  passed=$((passed + ${n:-0}))
}

for stage in "${stages[@]}"; do
  echo "=== $stage ===" >&2
  started=$SECONDS
  case $stage in
    normal)
      build_tree "$root/build/normal" "${normal_tree[@]}"
      run_ctest "$root/build/normal" -LE 'browser|cluster|chaos' ;;
    cluster)
      # Against Debian's nats-server: the store, scene nodes, gateways and bots through them, faults.
      build_tree "$root/build/normal" "${normal_tree[@]}"
      # A run of bots under faults fails now and then, also before this stage's last changes (a player
      # placed again at its town's landing cell whose client keeps its old cell: the open issue on
      # chaos). A failing test runs once more; a second failure fails the stage.
      run_ctest "$root/build/normal" -L cluster --repeat until-pass:2
      grep -q ' 0 tests failed out of [1-9]' "$root/build/normal/ctest.out" ||
        { echo "test.sh: the cluster stage ran no test (nats-server?)" >&2; exit 1; } ;;
    chaos)
      # Seeded faults under a thousand clients (tests/chaos): nats-server, three nodes, two gateways,
      # the bots; about two minutes. The seed is printed; SCENERT_CHAOS_SEED=N replays its schedule.
      # Each run draws a new seed: a failing one runs once more (with another seed), as the cluster
      # stage does, and its seed stays in the log to be replayed.
      build_tree "$root/build/normal" "${normal_tree[@]}"
      run_ctest "$root/build/normal" -L chaos --repeat until-pass:2
      grep -q ' 0 tests failed out of [1-9]' "$root/build/normal/ctest.out" ||
        { echo "test.sh: the chaos stage ran no test" >&2; exit 1; } ;;
    browser)
      build_tree "$root/build/normal" "${normal_tree[@]}"
      run_ctest "$root/build/normal" -L browser
      # A machine without Chromium registers no browser test: that is a failure here, not a pass.
      grep -q ' 0 tests failed out of [1-9]' "$root/build/normal/ctest.out" ||
        { echo "test.sh: the browser stage ran no test (chromium, chromedriver, python3-selenium?)" >&2; exit 1; } ;;
    asan)
      build_tree "$root/build/asan" -DCMAKE_BUILD_TYPE=Debug -DSCENERT_WERROR=ON "${line_tables[@]}" \
        -DSCENERT_SANITIZE=address,undefined -DSCENERT_BENCH=OFF
      ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 run_ctest "$root/build/asan" -LE 'browser|cluster|chaos'
      # The cluster's tests as in the cluster stage (a failing one runs once more).
      ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 run_ctest "$root/build/asan" -L cluster \
        --repeat until-pass:2 ;;
    tsan)
      # Only the suites that carry the `tsan` label are built (not the cluster's, the table's, ...).
      build_tree "$root/build/tsan" "${tsan_tree[@]}" -DSCENERT_WERROR=ON \
        -DSCENERT_SANITIZE=thread -DSCENERT_EXECUTOR=thread -DSCENERT_BENCH=OFF \
        -DSCENERT_TEST_FOLDERS="runtime;nav;scene;space;store;net;admin;bots;loadtest;apps"
      TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" run_ctest "$root/build/tsan" -L tsan ;;
    noassert)
      # With every SCENERT_ASSERT compiled out, the suites of the libraries that hold asserts
      # (runtime/, scene/; cluster/'s one reads a count) and of those below them; death tests
      # expect the asserts.
      configure_source "$root" "$root/build/noassert" "${normal_tree[@]}" \
        -DCMAKE_CXX_FLAGS=-DSCENERT_DISABLE_ASSERTS -DSCENERT_BENCH=OFF -DSCENERT_APPS=OFF \
        -DSCENERT_TEST_FOLDERS="runtime;nav;scene;space;config"
      cmake --build "$root/build/noassert" -j "$jobs" \
        --target runtime_tests nav_tests grid_tests scene_tests space_tests config_tests
      run_ctest "$root/build/noassert" -E 'DeathTest' ;;
    consumer)
      prefix="$root/build/install"
      build_tree "$root/build/normal" "${normal_tree[@]}"
      cmake --install "$root/build/normal" --prefix "$prefix" >/dev/null
      build_source "$root/tests/consumer" "$root/build/consumer" -DCMAKE_PREFIX_PATH="$prefix"
      "$root/build/consumer/consumer"
      "$root/build/consumer/consumer_server" check "$root/tests/consumer/modules.json" >/dev/null
      /usr/bin/python3 "$root/tests/consumer/installed_pages.py" --scenert "$prefix/bin/scenert" --source "$root" \
        --work "$root/build/consumer/pages"
      # The reference dungeon (examples/dungeon), a studio's own project: its module's tests, its
      # server's check of its table, one client playing it through, then 3 parties of its bots
      # (dungeon_server bots --play crypt; about 10 s in all), then the bench's light set.
      build_source "$root/examples/dungeon" "$root/build/dungeon" -DCMAKE_PREFIX_PATH="$prefix"
      run_ctest "$root/build/dungeon"
      "$root/build/dungeon/dungeon_server" check "$root/examples/dungeon/table.json" >/dev/null
      /usr/bin/python3 "$root/tests/consumer/dungeon_play.py" --scenert "$root/build/dungeon/dungeon_server" \
        --source "$root" --work "$root/build/dungeon/play" --protos "$root/build/normal/tests/protos"
      # The dungeon bench's light set through the network (20 parties of 2, quick fights, about 5 s):
      # every party through, the server's tick, CPU and store figures read from /metrics.
      /usr/bin/python3 "$root/scripts/bench_dungeon.py" --parties 20 --quick --seconds 40 \
        --server "$root/build/dungeon/dungeon_server" --work "$root/build/dungeon/bench" >/dev/null ;;
    fuzz)
      fuzz_dir="$root/build/fuzz"
      cmake -S "$root" -B "$fuzz_dir" -G Ninja "${checked_flags[@]}" -DCMAKE_CXX_COMPILER=clang++ \
        -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link -DSCENERT_SANITIZE=address,undefined -DSCENERT_FUZZ=ON \
        -DSCENERT_TESTS=OFF -DSCENERT_BENCH=OFF -DSCENERT_APPS=OFF >/dev/null
      cmake --build "$fuzz_dir" --target config_fuzz frame_fuzz front_fuzz -j "$jobs"
      ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "$fuzz_dir/tests/fuzz/config_fuzz" -runs=0 \
        -dict="$root/tests/fuzz/table.dict" "$root/tests/data/fuzz" "$root/examples" "$root/tests/data/bad" \
        "$root/tests/data/bad_semantic"
      ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "$fuzz_dir/tests/fuzz/frame_fuzz" -runs=0 \
        "$root/tests/data/fuzz_frames"
      ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "$fuzz_dir/tests/fuzz/front_fuzz" -runs=0 \
        "$root/tests/data/fuzz_front" "$root/tests/data/fuzz_frames" ;;
    *) echo "test.sh: unknown stage '$stage' (normal, cluster, chaos, browser, asan, tsan, noassert, consumer, fuzz)" >&2; exit 2 ;;
  esac
  echo "=== $stage passed in $((SECONDS - started)) s ===" >&2
done
echo "test.sh: all stages passed (${stages[*]})" >&2
echo "scenert tests: $passed passed, 0 failed"
