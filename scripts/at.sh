#!/usr/bin/env bash
# Runs a command as if the clock read a given local time in a given zone.
#
# Usage:
#   scripts/at.sh '<YYYY-MM-DD HH:MM[:SS]>' <zone> <command> [args...]
#   scripts/at.sh '2026-12-12 03:30' Asia/Tokyo cargo test -p raven-bin --test e2e -- feedback::
#
# Through libfaketime (the Debian package `faketime`, installed here when missing): the
# command and every process it starts see one wall clock, shifted by the same offset, so a
# time written by one process means the same to another. Monotonic time is not shifted, so
# timeouts and timers behave as usual. With cargo, only the test binaries (and the `raven`
# processes they start) run shifted, through a cargo runner: cargo itself, the compiler and
# build scripts see the real clock, so a shifted run never confuses incremental builds.
#
# The zone becomes TZ of the test binaries and RAVEN_TEST_TZ, the zone their `raven`
# processes run in (bin/tests/e2e/support). Prints one line saying when and where it runs.
set -euo pipefail

if [[ $# -lt 3 ]]; then
    sed -n '2,5p' "$0" >&2
    exit 2
fi
AT="$1"
ZONE="$2"
shift 2

if [[ ! -e "/usr/share/zoneinfo/$ZONE" ]]; then
    echo "at.sh: unknown zone '$ZONE'" >&2
    exit 2
fi
if ! target=$(TZ="$ZONE" date -d "$AT" +%s 2>/dev/null); then
    echo "at.sh: cannot read '$AT' as a date and time" >&2
    exit 2
fi

LIB=$(ls /usr/lib/*/faketime/libfaketime.so.1 2>/dev/null | head -n1 || true)
if [[ -z "$LIB" ]]; then
    echo "at.sh: installing libfaketime (Debian package faketime)" >&2
    if [[ $(id -u) -eq 0 ]]; then SUDO=(); else SUDO=(sudo); fi
    "${SUDO[@]}" apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq faketime >&2
    LIB=$(ls /usr/lib/*/faketime/libfaketime.so.1 | head -n1)
fi

# One offset from the real clock for every process: each process adds it to the real time,
# so all of them agree (an absolute "@" start would restart the clock in each process).
offset=$(( target - $(date +%s) ))
runner="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib/faketime-runner.sh"

export RAVEN_FAKETIME_LIB="$LIB"
export RAVEN_FAKETIME_OFFSET="$offset"
export TZ="$ZONE"
export RAVEN_TEST_TZ="$ZONE"
# cargo runs test binaries through the runner, which preloads libfaketime.
host=$(rustc -vV 2>/dev/null | sed -n 's/^host: //p')
if [[ -n "$host" ]]; then
    var="CARGO_TARGET_$(echo "$host" | tr 'a-z-' 'A-Z_')_RUNNER"
    export "$var=$runner"
fi
# libfaketime keeps a counter in shared memory under a semaphore that every process under it
# takes, and makes one of its own (a semaphore of 1) when none is named. A process SIGKILLed
# while holding it (the fault tests kill 200) would leave every later process waiting at
# start-up for ever. So name one here whose count no number of kills can use up.
shared="ravenft_$$"
python3 - "$shared" <<'PY'
import _multiprocessing, os, sys
name = sys.argv[1]
_multiprocessing.SemLock(1, 1_000_000, 2**31 - 1, f"/{name}_sem", False)
fd = os.open(f"/dev/shm/{name}_shm", os.O_CREAT | os.O_RDWR, 0o600)
os.ftruncate(fd, 4096)
os.close(fd)
PY
trap 'rm -f "/dev/shm/sem.${shared}_sem" "/dev/shm/${shared}_shm"' EXIT
export FAKETIME_SHARED="/${shared}_sem /${shared}_shm"

echo "at.sh: $(TZ="$ZONE" date -d "@$target" '+%a %Y-%m-%d %H:%M %Z') ($ZONE), $(date -u -d "@$target" '+%a %H:%M UTC')" >&2
if [[ "$1" == cargo ]]; then
    "$@"
else
    "$runner" "$@"
fi
