#!/usr/bin/env bash
# Soak: a release `raven up` with 1,000 cron jobs (every 30 s) while 100 conversations post
# to the gateway on 127.0.0.1 for a bounded time. It reports the supervisor's RSS at the start
# and the end, the deepest mailbox seen, the inbound posts answered, and fails on any error.
# Usage: scripts/soak.sh [SECONDS]   (default 60; needs curl)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
cargo build -q --release -p raven-bin
bin=$PWD/target/release/raven
dir=$(mktemp -d)
export RAVEN_GATEWAY_SECRET=soak-secret
cleanup() { kill -TERM "${pid:-0}" 2>/dev/null || true; wait 2>/dev/null || true; if [ -n "${SOAK_KEEP:-}" ]; then echo "kept $dir"; else rm -rf "$dir"; fi; }
trap cleanup EXIT
# Strike decay would pause every job after 5 unanswered fires (2.5 minutes in): the load is
# meant to last the whole run.
printf '[gateway]\nlisten = "127.0.0.1:0"\n[delivery]\njsonl_path = "out.jsonl"\n[cron]\nstrike_limit = 1000000\n' > "$dir/config.toml"

echo "== adding 1,000 cron jobs =="
python3 - "$dir" <<'EOF'
import json, sys, datetime, os
t = datetime.datetime.now(datetime.timezone.utc)
fmt = lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ")
# Every 30 s, the first fires a few seconds in, spread over 5 s.
jobs = [{"id": f"soak-{i}", "message": f"soak reminder {i}", "target": "jsonl:soak", "created_at": fmt(t),
         "schedule": {"kind": "every", "every_s": 30,
                      "anchor": fmt(t - datetime.timedelta(seconds=25) + datetime.timedelta(seconds=i % 5))}}
        for i in range(int(os.environ.get("SOAK_JOBS", "1000")))]
import os
os.makedirs(f"{sys.argv[1]}/cron", exist_ok=True)
json.dump({"jobs": jobs}, open(f"{sys.argv[1]}/cron/jobs.json", "w"))
EOF

"$bin" --data-dir "$dir" up 2>"$dir/up.log" &
pid=$!
until "$bin" --data-dir "$dir" status >/dev/null 2>&1; do sleep 0.01; done
until [ -s "$dir/gateway.addr" ]; do sleep 0.01; done
addr=$(cut -d' ' -f1 "$dir/gateway.addr")
rss() { awk '/VmRSS/ {print $2}' "/proc/$pid/status"; }
rss_start=$(rss)

echo "== 100 conversations posting for ${secs}s to http://$addr =="
end=$(( $(date +%s) + secs ))
for c in $(seq 1 100); do
  (
    n=0; ok=0
    while [ "$(date +%s)" -lt "$end" ]; do
      n=$((n + 1))
      body=$(printf '{"channel": "jsonl", "chat_id": "c%d", "text": "message %d"}' "$c" "$n")
      out=$(curl -s -m 60 -w '\n%{http_code}' -H "x-raven-secret: $RAVEN_GATEWAY_SECRET" \
            -H 'content-type: application/json' -d "$body" "http://$addr/inbound" || echo "curl failed")
      if [ "${out##*$'\n'}" = 200 ] && grep -q '"reply"' <<< "$out"; then
        ok=$((ok + 1))
      else
        echo "conversation $c message $n: ${out//$'\n'/ }" >> "$dir/failures"
      fi
    done
    echo "$n $ok" > "$dir/conv-$c"
  ) &
done
depth_max=0
mid=$(( $(date +%s) + secs / 3 )); rss_mid=""
while [ "$(date +%s)" -lt "$end" ]; do
  if [ -z "$rss_mid" ] && [ "$(date +%s)" -ge "$mid" ]; then rss_mid=$(rss); fi
  d=$("$bin" --data-dir "$dir" status | awk 'NR > 3 && $5 ~ /^[0-9]+$/ { if ($5 > m) m = $5 } END { print m + 0 }')
  [ "$d" -gt "$depth_max" ] && depth_max=$d
  sleep 1
done
wait $(jobs -p | grep -v "^$pid$") 2>/dev/null || true
rss_end=$(rss)

sent=0; answered=0
for f in "$dir"/conv-*; do read -r n ok < "$f"; sent=$((sent + n)); answered=$((answered + ok)); done
fires=$(grep -c 'soak reminder' "$dir/out.jsonl" || true)
errors=$(grep -ci 'error' "$dir/up.log" || true)
printf '%-36s %10s\n' "inbound posts sent" "$sent"
printf '%-36s %10s\n' "inbound posts answered" "$answered"
printf '%-36s %10s\n' "cron reminders delivered" "$fires"
printf '%-36s %10s\n' "deepest mailbox seen" "$depth_max"
awk -v a="$rss_start" -v m="${rss_mid:-$rss_end}" -v b="$rss_end" \
  'BEGIN { printf "%-36s %.1f -> %.1f -> %.1f MB\n", "supervisor RSS start -> 1/3 -> end", a / 1024, m / 1024, b / 1024 }'
printf '%-36s %10s\n' "error lines in the supervisor log" "$errors"
if [ -s "$dir/failures" ]; then echo "unanswered (first 5):"; head -5 "$dir/failures"; fi
[ "$sent" -gt 0 ] && [ "$answered" -eq "$sent" ] && [ "$errors" -eq 0 ] || { echo "soak FAILED"; exit 1; }
echo "soak ok"
