# shellcheck shell=bash
# Sourced by smtp.sh and synapse.sh, which run a Python server for the
# end-to-end tests: the pinned venv install (ensure_venv), process checks
# (alive, running, listening), the workdir lock (lock_workdir), starting
# (launch) and stopping (stop_locked, stop) the server, die, and main, the
# install | start <workdir> | stop <workdir> command line.
#
# The caller sets these first:
#   NAME      the script's name without .sh: prefixes messages, names the lock
#   PY_DIR    the directory holding the venvs
#   VENV      this server's venv
#   PACKAGES  the pinned pip requirements, the server's own package first
# and defines start <workdir>, which prints the server's address on stdout.

die() {
    echo "$NAME.sh: error: $*" >&2
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
        echo "$NAME.sh: installing ${PACKAGES[0]} into $VENV" >&2
        rm -rf "$VENV"
        python3 -m venv "$VENV" >&2 || die "could not create the venv $VENV"
        if ! "$VENV/bin/pip" install -q --only-binary :all: "${PACKAGES[@]}" >&2; then
            rm -rf "$VENV"
            die "pip install of ${PACKAGES[0]} and its pinned dependencies failed (see the pip output above)"
        fi
        echo "${PACKAGES[*]}" >"$marker"
    ) 9>"$PY_DIR/$NAME.lock"
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

# Takes workdir $1's lock on fd 8: one start or stop at a time per workdir.
lock_workdir() {
    exec 8>"$1/.lock"
    flock 8
}

# launch <workdir> <port> <outfile> <command>...: unless the server recorded
# in <workdir>/pid is running, starts <command> detached in <workdir> with its
# output in <outfile> there and records its pid; refuses when something else
# listens on <port>.
launch() {
    local dir=$1 port=$2 out=$3
    shift 3
    running "$dir" && return 0
    # Something else on the port would pass the readiness probe for us.
    listening "$port" && die "port $port (from $dir/port) is already in use by another process"
    (
        cd "$dir" || exit
        exec setsid "$@" </dev/null >"$out" 2>&1 8>&-
    ) &
    echo $! >"$dir/pid"
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
    lock_workdir "$1"
    stop_locked "$1"
}

main() {
    case "${1:-}" in
        install) ensure_venv ;;
        start) [[ $# -eq 2 ]] || die "usage: $0 start <workdir>"; start "$2" ;;
        stop) [[ $# -eq 2 ]] || die "usage: $0 stop <workdir>"; stop "$2" ;;
        *) die "usage: $0 install | start <workdir> | stop <workdir>" ;;
    esac
}
