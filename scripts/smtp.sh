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
PY_DIR="${RAVEN_PY_DIR:-$ROOT/target/py}"
VENV="$PY_DIR/smtp"
# aiosmtpd and its dependencies, pinned; all install from wheels.
PACKAGES=(aiosmtpd==1.4.6 atpublic==9.0.0 attrs==26.1.0)

die() {
    echo "smtp.sh: error: $*" >&2
    exit 1
}

# Creates the venv unless a complete install of the pinned packages is there.
# Concurrent callers serialize on a lock file; the marker is written last, so
# an interrupted install is redone from scratch.
ensure_venv() {
    local marker="$VENV/.installed"
    [[ -f $marker && $(<"$marker") == "${PACKAGES[*]}" ]] && return 0
    mkdir -p "$PY_DIR"
    (
        flock 9
        [[ -f $marker && $(<"$marker") == "${PACKAGES[*]}" ]] && exit 0
        echo "smtp.sh: installing ${PACKAGES[0]} into $VENV" >&2
        rm -rf "$VENV"
        python3 -m venv "$VENV" >&2 || die "could not create the venv $VENV"
        if ! "$VENV/bin/pip" install -q --only-binary :all: "${PACKAGES[@]}" >&2; then
            rm -rf "$VENV"
            die "pip install of ${PACKAGES[0]} and its pinned dependencies failed (see the pip output above)"
        fi
        echo "${PACKAGES[*]}" >"$marker"
    ) 9>"$PY_DIR/smtp.lock"
}

# True while process $1 exists and is not a zombie waiting to be reaped.
alive() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [[ ${stat:0:1} != Z ]]
}

# True when the pid in $1/pid names a live process.
running() {
    local pid
    [[ -f $1/pid ]] && pid=$(<"$1/pid") && [[ -n $pid ]] && alive "$pid"
}

# True when something accepts connections on 127.0.0.1:$1.
listening() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

start() {
    local dir=$1 port pid
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    ensure_venv
    # One start or stop at a time per workdir.
    exec 8>"$dir/.lock"
    flock 8

    if [[ ! -f $dir/port ]]; then
        "$VENV/bin/python" -c '
import socket
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    print(s.getsockname()[1])' >"$dir/port.tmp"
        mv "$dir/port.tmp" "$dir/port"
    fi
    port=$(<"$dir/port")

    if ! running "$dir"; then
        # Something else on the port would pass the readiness probe for us.
        listening "$port" && die "port $port (from $dir/port) is already in use by another process"
        (
            cd "$dir"
            exec setsid "$VENV/bin/python" -u "$SCRIPTS/smtp_server.py" "$dir" \
                </dev/null >smtp.out 2>&1 8>&-
        ) &
        echo $! >"$dir/pid"
    fi
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

# Waits up to $2 tenths of a second for process $1 to end; false if it did not.
wait_gone() {
    local i
    for ((i = 0; i < $2; i++)); do
        alive "$1" || return 0
        sleep 0.1
    done
    ! alive "$1"
}

# SIGTERM, then SIGKILL after 10 s; nothing to do when the server is not
# running. The caller holds the workdir's lock.
stop_locked() {
    local dir=$1 pid
    if running "$dir"; then
        pid=$(<"$dir/pid")
        kill -TERM "$pid" 2>/dev/null || true
        if ! wait_gone "$pid" 100; then
            kill -KILL "$pid" 2>/dev/null || true
            wait_gone "$pid" 50 || die "process $pid survived SIGKILL"
        fi
    fi
    rm -f "$dir/pid"
}

stop() {
    [[ -d $1 ]] || return 0
    exec 8>"$1/.lock"
    flock 8
    stop_locked "$1"
}

case "${1:-}" in
    install) ensure_venv ;;
    start) [[ $# -eq 2 ]] || die "usage: $0 start <workdir>"; start "$2" ;;
    stop) [[ $# -eq 2 ]] || die "usage: $0 stop <workdir>"; stop "$2" ;;
    *) die "usage: $0 install | start <workdir> | stop <workdir>" ;;
esac
