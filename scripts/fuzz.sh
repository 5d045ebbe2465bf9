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
# A new seed each run (CI's `cargo test` uses the fixed one in .cargo/config.toml); printed,
# so a failure can be run again with PROPTEST_RNG_SEED=<seed> scripts/fuzz.sh.
export PROPTEST_RNG_SEED="${PROPTEST_RNG_SEED:-$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')}"
echo "== PROPTEST_CASES=$PROPTEST_CASES PROPTEST_RNG_SEED=$PROPTEST_RNG_SEED =="
cargo test --release -p raven-proto --test wire_props -- "$@"
cargo test --release -p raven-actors --test processes -- "${@:-fuzz_props::}"
