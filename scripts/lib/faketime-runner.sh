#!/usr/bin/env bash
# Runs one program with libfaketime preloaded, the wall clock shifted by
# RAVEN_FAKETIME_OFFSET seconds (monotonic time left alone). Set up by scripts/at.sh,
# which cargo calls this as the runner of its test binaries.
set -euo pipefail
: "${RAVEN_FAKETIME_LIB:?set by scripts/at.sh}"
: "${RAVEN_FAKETIME_OFFSET:?set by scripts/at.sh}"
if [[ "$RAVEN_FAKETIME_OFFSET" == -* ]]; then
    shift_by="$RAVEN_FAKETIME_OFFSET"
else
    shift_by="+$RAVEN_FAKETIME_OFFSET"
fi
export LD_PRELOAD="$RAVEN_FAKETIME_LIB${LD_PRELOAD:+:$LD_PRELOAD}"
export FAKETIME="$shift_by"
export FAKETIME_DONT_FAKE_MONOTONIC=1
# FAKETIME_SHARED (the shared semaphore that kills cannot use up) comes from scripts/at.sh.
exec "$@"
