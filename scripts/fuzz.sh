#!/usr/bin/env bash
# The property tests, run long: the frame decoder (raven-proto wire_props) and jobs.json,
# the planner's tool arguments, attention.md splicing and menu replies (raven-actors
# fuzz_props). CI runs the same tests with the default 256 cases per property.
#
# Usage: scripts/fuzz.sh                      (20,000 cases per property, release build)
#        PROPTEST_CASES=200000 scripts/fuzz.sh
#        scripts/fuzz.sh planner              (extra arguments filter the tests by name)
#
# A failure prints the minimal failing input; pin it as a named #[test] in the test file.
set -euo pipefail
cd "$(dirname "$0")/.."

export PROPTEST_CASES="${PROPTEST_CASES:-20000}"
echo "== PROPTEST_CASES=$PROPTEST_CASES =="
cargo test --release -p raven-proto --test wire_props -- "$@"
cargo test --release -p raven-actors --test fuzz_props -- "$@"
