#!/usr/bin/env bash
# Every benchmark figure in one table, each next to its in-run baseline.
# Usage: scripts/bench.sh            (release build; takes about three minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."

# One bench target of a crate under a heading.
crate_bench() {
    echo "== $3 =="
    cargo bench -q -p "$1" --bench "$2" 2>/dev/null | grep -v '^$'
    echo
}
bench() { crate_bench raven-actors "$@"; }
# The benches that run the `raven` binary (built first).
bin_bench() { crate_bench raven-bin "$@"; }

bench policy_check "NudgePolicy check() (baseline: the 100-entry ledger)"
bench tick "Sentinel tick (baseline: reading MEMORY.md and history.md)"
bench spine "Spine: 1,000 conversations x 10 turns (baseline: the same turns run directly)"
bench socket "Control socket (baseline: a raw Unix stream ping-pong of the same frame)"
bench cron "Cron at 10,000 jobs (baselines: 100 jobs; a full parse; fires with no jobs waiting)"
bench outbox "Outbox bytes written and time per operation, 1,000 dead letters and 10,000 waiting (baseline: an empty outbox)"
bench prompt_budget "Planner request bodies of the month scenario with a 1 MB MEMORY.md, bounded (baseline: unbounded)"

cargo build -q --release -p raven-bin

bin_bench gateway "Gateway POST with 10,000 messages waiting in the outbox (baseline: an empty outbox)"
bin_bench tick_live "A real tick in a running supervisor (baseline: a Ping on the same socket)"
bin_bench fire_live "Bytes written a cron fire by a running raven up, 1,000 dead letters (baseline: none)"
bin_bench memory "Idle memory of raven up, empty and with 10,000 waiting (RSS from /proc/<pid>/status)"

echo "== raven simulate: a week on the manual clock =="
out=$(mktemp -d)
start=$(date +%s%N)
target/release/raven simulate scenarios/week.toml --out "$out" >/dev/null
week=$(( ($(date +%s%N) - start) / 1000000 ))
rm -rf "$out"
printf '%-52s %7d ms   (target <= 10000 ms; scenarios/week.toml, 7 days)\n' "simulate a week" "$week"
echo

echo "== Anticipation: four thirty-day personas, no model (target >= 80 % hit, 0 violations) =="
python3 scripts/personas.py --check --raven target/release/raven
echo

echo "== raven up: start to ready =="
bin=target/release/raven
dir=$(mktemp -d)
trap 'kill -TERM "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
printf '[gateway]\nlisten = "127.0.0.1:0"\n' > "$dir/config.toml"
start=$(date +%s%N)
"$bin" --data-dir "$dir" up 2>/dev/null &
pid=$!
until "$bin" --data-dir "$dir" status >/dev/null 2>&1; do sleep 0.002; done
ready=$(( ($(date +%s%N) - start) / 1000000 ))
printf '%-52s %7d ms   (target <= 200 ms; includes the first status round trip)\n' "start to ready (socket answers)" "$ready"
