#!/usr/bin/env bash
# Every benchmark figure in one table, each next to its in-run baseline.
# Usage: scripts/bench.sh            (release build; takes about a minute on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== NudgePolicy check() (baseline: the 100-entry ledger) =="
cargo bench -q -p raven-actors --bench policy_check 2>/dev/null | grep -v '^$'

echo
echo "== Sentinel tick (baseline: reading MEMORY.md and history.md) =="
cargo bench -q -p raven-actors --bench tick 2>/dev/null | grep -v '^$'

echo
echo "== Spine: 1,000 conversations x 10 turns (baseline: the same turns run directly) =="
cargo bench -q -p raven-actors --bench spine 2>/dev/null | grep -v '^$'
