#!/usr/bin/env bash
# Builds scenert (release) and runs the main job, the whole stack on this machine: `scenert run`
# hosts examples/mmo.json with TCP, WebSocket and admin on free loopback ports; `scenert bots`
# connects 2,000 real clients over 20 s (arriving all along the run, two moves a second each: a
# crowded town at ten saturates the front's one I/O thread on a 2-core machine shared with the bots)
# and checks every client's view against the server's lines (phases included);
# then a few lines of /metrics, and the server stops on SIGTERM. Exits non-zero when a step failed.
# Extra arguments go to `scenert bots` (e.g. --clients 500 --report out.json).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
bash "$here/setup.sh"
build_tree "$root/build/release" -DCMAKE_BUILD_TYPE=Release -DSCENERT_TESTS=OFF -DSCENERT_BENCH=OFF >&2
scenert="$root/build/release/apps/scenert"

log=$(mktemp)
"$scenert" run "$root/examples/mmo.json" --tcp 127.0.0.1:0 --ws 127.0.0.1:0 --admin 127.0.0.1:0 --io-threads 2 \
  2>"$log" &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 100); do grep -q "admin endpoint" "$log" && break; sleep 0.1; done
tcp=$(grep -o 'tcp://127\.0\.0\.1:[0-9]*' "$log" | head -1 | sed 's/.*://')
admin=$(grep -o 'admin endpoint http://127\.0\.0\.1:[0-9]*' "$log" | head -1 | sed 's/.*://')
if [[ -z "$tcp" || -z "$admin" ]]; then
  echo "run.sh: scenert run did not start:" >&2
  cat "$log" >&2
  exit 1
fi
echo "== scenert run examples/mmo.json: clients on 127.0.0.1:$tcp, admin on 127.0.0.1:$admin"

echo "== scenert bots: 2,000 clients for 20 s, views checked against the server's lines"
status=0
"$scenert" bots "127.0.0.1:$tcp" --clients 2000 --seconds 20 --rate 100 --move-hz 2 --threads 2 --seed 1 \
  --verify-views "127.0.0.1:$admin" --checkpoints 1 --threshold errors==0 "$@" || status=$?

echo "== the server's /metrics (a few lines)"
{ exec 3<>"/dev/tcp/127.0.0.1/$admin" && printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3 && cat <&3; } |
  grep -E '^scenert_(net_connections |net_frames_(in|out)_total|net_writes_total|world_players |net_logins_total)' || true

echo "== SIGTERM"
kill -TERM "$server"
server_status=0
wait "$server" || server_status=$?
grep -E 'stopping|stopped in' "$log" || true
echo "scenert run exited $server_status; scenert bots exited $status"
[[ $status -eq 0 && $server_status -eq 0 ]]
