#!/usr/bin/env bash
# A real SMTP server (aiosmtpd, scripts/smtp_server.py) on 127.0.0.1 for the
# end-to-end tests.
#
# Usage:
#   scripts/smtp.sh install          create the Python venv with aiosmtpd
#   scripts/smtp.sh start <workdir>  start the server, print 127.0.0.1:<port>
#   scripts/smtp.sh stop <workdir>   stop the server started in <workdir>
#
# The venv lives in ${RAVEN_PY_DIR:-target/py}/smtp. See smtp_server.py for
# what lands in <workdir>.
set -euo pipefail

SCRIPTS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$SCRIPTS")"
NAME=smtp
PY_DIR="${RAVEN_PY_DIR:-$ROOT/target/py}"
VENV="$PY_DIR/$NAME"
# aiosmtpd and its dependencies, pinned; all install from wheels.
PACKAGES=(aiosmtpd==1.4.6 atpublic==9.0.0 attrs==26.1.0)

# shellcheck source-path=SCRIPTDIR source=lib/pyserver.sh
source "$SCRIPTS/lib/pyserver.sh"

start() {
    local dir=$1 port pid
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    ensure_venv
    lock_workdir "$dir"

    if [[ ! -f $dir/port ]]; then
        "$VENV/bin/python" -c '
import socket
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    print(s.getsockname()[1])' >"$dir/port.tmp"
        mv "$dir/port.tmp" "$dir/port"
    fi
    port=$(<"$dir/port")

    launch "$dir" "$port" smtp.out "$VENV/bin/python" -u "$SCRIPTS/smtp_server.py" "$dir"
    pid=$(<"$dir/pid")

    local deadline=$((SECONDS + 30))
    until listening "$port"; do
        if ! alive "$pid" || ((SECONDS >= deadline)); then
            echo "smtp.sh: error: the SMTP server (pid $pid) did not start listening on port $port" >&2
            tail -n 40 "$dir/smtp.out" >&2 2>/dev/null || true
            stop_locked "$dir"
            exit 1
        fi
        sleep 0.1
    done
    echo "127.0.0.1:$port"
}

main "$@"
