#!/usr/bin/env bash
# The whole test suite at four moments of the coming week, each in UTC, a zone east of it and
# a zone west of it (twelve runs through scripts/at.sh), then one line per run.
#
# Usage: scripts/clock-matrix.sh [cargo test arguments; default: --workspace]
# The moments: Saturday 12:00, Sunday 03:30, Wednesday 23:30 and Wednesday 12:00, local to
# each zone. About 4 minutes a run on 2 cores once built.
set -uo pipefail
cd "$(dirname "$0")/.."
args=("$@")
[[ ${#args[@]} -eq 0 ]] && args=(--workspace)
cargo test "${args[@]}" --no-run -q >/dev/null 2>&1 || { echo "clock-matrix: the build failed" >&2; exit 1; }
summary=()
failed=0
for zone in UTC Asia/Kathmandu America/Los_Angeles; do
    for when in 'next saturday 12:00' 'next sunday 03:30' 'next wednesday 23:30' 'next wednesday 12:00'; do
        at=$(TZ=$zone date -d "$when" '+%Y-%m-%d %H:%M')
        log=$(mktemp)
        start=$(date +%s)
        scripts/at.sh "$at" "$zone" cargo test "${args[@]}" --no-fail-fast >"$log" 2>&1
        rc=$?
        secs=$(( $(date +%s) - start ))
        counts=$(awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
                     END { printf "%d passed, %d failed", p, f }' "$log")
        line="$(TZ=$zone date -d "$at" '+%a %Y-%m-%d %H:%M') $zone: $counts (exit $rc, ${secs} s)"
        if [[ $rc -ne 0 ]]; then
            failed=$(( failed + 1 ))
            grep -E '^test .* FAILED$|panicked at' "$log" | sed 's/^/    /' | head -n 20
        fi
        echo "$line"
        summary+=("$line")
        rm -f "$log"
    done
done
echo "--- clock matrix"
printf '%s\n' "${summary[@]}"
echo "$(( 12 - failed )) passed, $failed failed"
[[ $failed -eq 0 ]]
