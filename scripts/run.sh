#!/usr/bin/env bash
# Builds scenert (release) and runs the main job, the whole stack on this machine: `scenert run`
# hosts examples/mmo.json with TCP, WebSocket and admin on free loopback ports; `scenert bots`
# connects 2,000 real clients over 20 s (arriving all along the run, two moves a second each: a
# crowded town at ten saturates the front's one I/O thread on a 2-core machine shared with the bots)
# and checks every client's view against the server's lines (phases included);
# then what the server spent (CPU per delivered frame, per connected client, per move), a few lines of
# /metrics, and the server stops on SIGTERM. Exits non-zero when a step failed.
# With two cores or more the server runs alone on core 0 and the bots on core 1 (every thread of both
# checked), so that the latencies are the server's; the bots say their own lag and warn when their
# core was full.
# Extra arguments go to `scenert bots` (e.g. --clients 500 --report out.json).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
bash "$here/setup.sh"
build_tree "$root/build/release" -DCMAKE_BUILD_TYPE=Release -DSCENERT_TESTS=OFF -DSCENERT_BENCH=OFF >&2
scenert="$root/build/release/apps/scenert"

server_on=() bots_on=()
if pin=$(python3 "$here/pinning.py" plan) && [[ -n "$pin" ]]; then
  read -r server_core bots_core <<<"$pin"
  server_on=(taskset -c "$server_core") bots_on=(taskset -c "$bots_core")
  echo "== server pinned to core $server_core, bots to core $bots_core"
else
  echo "== not pinned: one core, the server and the bots share it (latency figures include the bots' own lag)"
fi

log=$(mktemp)
"${server_on[@]}" "$scenert" run "$root/examples/mmo.json" --tcp 127.0.0.1:0 --ws 127.0.0.1:0 --admin 127.0.0.1:0 --io-threads 2 \
  2>"$log" &
server=$!
watcher=""
trap 'kill "$server" 2>/dev/null || true; [[ -z "$watcher" ]] || kill "$watcher" 2>/dev/null || true; rm -f "$log" "$log".*' EXIT
for _ in $(seq 100); do grep -q "admin endpoint" "$log" && break; sleep 0.1; done
tcp=$(grep -o 'tcp://127\.0\.0\.1:[0-9]*' "$log" | head -1 | sed 's/.*://')
admin=$(grep -o 'admin endpoint http://127\.0\.0\.1:[0-9]*' "$log" | head -1 | sed 's/.*://')
if [[ -z "$tcp" || -z "$admin" ]]; then
  echo "run.sh: scenert run did not start:" >&2
  cat "$log" >&2
  exit 1
fi
echo "== scenert run examples/mmo.json: clients on 127.0.0.1:$tcp, admin on 127.0.0.1:$admin"

# Every thread of a pinned process on its core (the server's read again at the end: some start late).
pin_status=0
check_pinned() {
  [[ -z "${server_core:-}" ]] || python3 "$here/pinning.py" check "$1" "$2" "$3" || pin_status=1
}
check_pinned "scenert run" "$server" "${server_core:-}"

echo "== scenert bots: 2,000 clients for 20 s (or as the extra arguments say), views checked against the server's lines"
python3 "$here/server_cost.py" watch "$server" "$admin" ${server_core:+"$server_core" "$bots_core"} >"$log.cost" &
watcher=$!
for _ in $(seq 100); do [[ -s "$log.cost" ]] && break; sleep 0.1; done
# The bots stay in the foreground (Ctrl-C ends their run with its report); their threads are read
# once their workers started, by a watcher that learns their pid from the file they write first.
checker=""
if [[ -n "${bots_core:-}" ]]; then
  (for _ in $(seq 100); do
     b=$(cat "$log.bots" 2>/dev/null) && [[ -n "$b" && $(ls "/proc/$b/task" 2>/dev/null | wc -l) -ge 3 ]] && break
     sleep 0.1
   done
   python3 "$here/pinning.py" check "scenert bots" "${b:-0}" "$bots_core") >"$log.pin" 2>&1 &
  checker=$!
fi
status=0
# The main job's run, each flag unless the extra arguments give it (an option given twice is an error).
defaults=()
for pair in "--clients 2000" "--seconds 20" "--rate 100" "--move-hz 2" "--threads 2" "--seed 1"; do
  flag=${pair% *}
  [[ " $* " == *" $flag "* ]] || defaults+=($pair)
done
bash -c 'echo $$ >"$0"; exec "$@"' "$log.bots" "${bots_on[@]}" "$scenert" bots "127.0.0.1:$tcp" "${defaults[@]}" \
  --verify-views "127.0.0.1:$admin" --checkpoints 1 --threshold errors==0 "$@" || status=$?
if [[ -n "$checker" ]]; then
  wait "$checker" || pin_status=1
  cat "$log.pin"
fi
kill -TERM "$watcher"
wait "$watcher" || true
watcher=""
check_pinned "scenert run" "$server" "${server_core:-}"
echo "== what the server spent on its clients (while the bots ran)"
tail -n +2 "$log.cost"

echo "== the server's /metrics (a few lines)"
{ exec 3<>"/dev/tcp/127.0.0.1/$admin" && printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3 && cat <&3; } |
  grep -E '^scenert_(net_connections |net_frames_(in|out)_total|net_writes_total|world_players |net_logins_total)' || true

echo "== SIGTERM"
kill -TERM "$server"
server_status=0
wait "$server" || server_status=$?
grep -E 'stopping|stopped in' "$log" || true
echo "scenert run exited $server_status; scenert bots exited $status"
[[ $pin_status -eq 0 ]] || echo "run.sh: a thread ran outside its core (see above)" >&2
[[ $status -eq 0 && $server_status -eq 0 && $pin_status -eq 0 ]]
