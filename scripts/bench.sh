#!/usr/bin/env bash
# Builds the benches (release) and runs every macro bench RUNS times (default 3), then prints a table
# of medians: the pool, the AOI against the seeds' baselines, and hosting dungeons. The raw JSON of
# every run lands in build/bench-results/. Usage: scripts/bench.sh [--quick] [--runs N]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
bash "$here/setup.sh"

runs=3 quick=0
while (($#)); do
  case $1 in
    --quick) quick=1 ;;
    --runs) runs=$2; shift ;;
    *) echo "bench.sh: unknown option '$1' (--quick, --runs N)" >&2; exit 2 ;;
  esac
  shift
done

build_tree "$root/build/release" -DCMAKE_BUILD_TYPE=Release -DSCENERT_TESTS=OFF -DSCENERT_BENCH=ON >&2
bin="$root/build/release/bench"
out="$root/build/bench-results"
rm -rf "$out" && mkdir -p "$out"

secs=10 services=100000 lines=100000
((quick)) && secs=2 services=20000 lines=20000
benches=(
  "pool_100k|$bin/bench_pool --services $services --hz 10 --workers 2 --seconds $secs --wake-probe"
  "pool_1m|$bin/bench_pool --services $((services * 10)) --hz 10 --workers 2 --seconds $secs"
  "pool_1m_thp|env GLIBC_TUNABLES=glibc.malloc.hugetlb=1 $bin/bench_pool --services $((services * 10)) --hz 10 --workers 2 --seconds $secs"
  "dungeons|$bin/bench_host_dungeons --lines $lines --workers 2 --seconds $secs"
)
for s in s1 s2 s3 s4 s5 seed001; do benches+=("aoi_$s|$bin/bench_aoi --scenario $s"); done

for entry in "${benches[@]}"; do
  name=${entry%%|*} cmd=${entry#*|}
  for ((i = 1; i <= runs; i++)); do
    echo "bench.sh: $name run $i/$runs" >&2
    $cmd > "$out/$name.$i.json" 2>/dev/null
  done
done
echo "load average during the runs: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores" >&2
python3 "$here/bench_table.py" "$out"
