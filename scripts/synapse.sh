#!/usr/bin/env bash
# A real Matrix homeserver (Synapse) on 127.0.0.1 for the end-to-end tests.
#
# Usage:
#   scripts/synapse.sh install          create the Python venv with Synapse
#   scripts/synapse.sh start <workdir>  start (configuring on first use), print the base URL
#   scripts/synapse.sh stop <workdir>   stop the server started in <workdir>
#
# The venv lives in ${RAVEN_PY_DIR:-target/py}/synapse. A first start registers
# the users raven (password raven-pass) and alice (password alice-pass) on the
# server name raven.test.
set -euo pipefail

SCRIPTS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$SCRIPTS")"
NAME=synapse
PY_DIR="${RAVEN_PY_DIR:-$ROOT/target/py}"
VENV="$PY_DIR/$NAME"
# Synapse and its whole dependency tree, pinned so that a new release of a
# dependency cannot change the server under the tests; all install from binary
# wheels on CPython 3.11 linux x86_64.
PACKAGES=(
    matrix-synapse==1.163.2
    annotated-types==0.8.0 attrs==26.1.0 Automat==25.4.16 bcrypt==5.0.0 bleach==6.4.0
    canonicaljson==2.0.0 certifi==2026.10.19.post1 cffi==2.1.1 charset-normalizer==3.5.3
    constantly==23.10.4 cryptography==50.0.2 hyperlink==21.0.0 idna==3.20 ijson==3.6.0
    immutabledict==4.3.1 Incremental==24.11.0 Jinja2==3.1.6 jsonschema==4.26.0
    jsonschema-specifications==2025.9.1 MarkupSafe==3.0.4 matrix-common==1.3.0
    msgpack==1.2.4 multipart==2.0.1 netaddr==1.3.0 packaging==26.4 phonenumbers==9.0.43
    pillow==13.0.0 prometheus_client==0.26.0 pyasn1==0.6.5 pyasn1_modules==0.4.2
    pycparser==3.12 pydantic==2.14.4 pydantic_core==2.50.5 pymacaroons==0.13.0
    PyNaCl==1.6.2 pyOpenSSL==26.4.0 pyparsing==3.3.3 pyrsistent==0.20.0
    python-multipart==0.0.34 PyYAML==6.0.4 referencing==0.37.0 requests==2.34.2
    rpds-py==2026.9.1 semantic-version==2.10.0 service-identity==26.1.0
    setuptools-rust==1.13.0 signedjson==1.1.4 six==1.17.0 sortedcontainers==2.4.0
    treq==26.7.0 Twisted==26.10.0 typing-inspection==0.4.5 typing_extensions==4.16.0
    unpaddedbase64==2.1.0 urllib3==2.8.0 webencodings==0.6.1 zope.interface==8.7
)

# shellcheck source-path=SCRIPTDIR source=lib/pyserver.sh
source "$SCRIPTS/lib/pyserver.sh"

# Writes homeserver.yaml, log.config, the signing key and the port file.
generate_config() {
    local dir=$1
    "$VENV/bin/python" - "$dir" <<'EOF'
import os, secrets, socket, sys

import yaml
from signedjson.key import generate_signing_key, write_signing_keys

d = sys.argv[1]
port_file = os.path.join(d, "port")
if os.path.exists(port_file):
    port = int(open(port_file).read())
else:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

key_path = os.path.join(d, "signing.key")
if not os.path.exists(key_path):
    with open(key_path, "w") as f:
        write_signing_keys(f, [generate_signing_key("a_" + secrets.token_hex(2))])

# Rate limits far above anything a test does.
unlimited = {"per_second": 100000, "burst_count": 100000}
limits = {
    name: unlimited
    for name in [
        "rc_message", "rc_registration", "rc_registration_token_validity",
        "rc_admin_redaction", "rc_joins_per_room", "rc_3pid_validation",
        "rc_third_party_invite", "rc_media_create", "rc_key_requests",
        "rc_delayed_event_mgmt", "rc_room_creation", "rc_reports",
        "rc_user_directory", "rc_profile",
    ]
}
limits["rc_login"] = {k: unlimited for k in ("address", "account", "failed_attempts")}
limits["rc_joins"] = {k: unlimited for k in ("local", "remote")}
limits["rc_invites"] = {k: unlimited for k in ("per_room", "per_user", "per_issuer")}
limits["rc_presence"] = {"per_user": unlimited}

config = {
    "server_name": "raven.test",
    "public_baseurl": f"http://127.0.0.1:{port}/",
    "pid_file": os.path.join(d, "homeserver.pid"),
    "listeners": [{
        "port": port,
        "bind_addresses": ["127.0.0.1"],
        "type": "http",
        "tls": False,
        "x_forwarded": False,
        "resources": [{"names": ["client"], "compress": False}],
    }],
    "database": {"name": "sqlite3", "args": {"database": os.path.join(d, "homeserver.db")}},
    "log_config": os.path.join(d, "log.config"),
    "media_store_path": os.path.join(d, "media_store"),
    "signing_key_path": key_path,
    "registration_shared_secret": secrets.token_hex(32),
    "macaroon_secret_key": secrets.token_hex(32),
    "form_secret": secrets.token_hex(32),
    "enable_registration": False,
    # Cheap password hashing: logins take milliseconds instead of a quarter second.
    "bcrypt_rounds": 4,
    "report_stats": False,
    "url_preview_enabled": False,
    "presence": {"enabled": False},
    "suppress_key_server_warning": True,
    "trusted_key_servers": [],
    **limits,
}
log_config = {
    "version": 1,
    "formatters": {"precise": {
        "format": "%(asctime)s - %(name)s - %(lineno)d - %(levelname)s - %(request)s - %(message)s",
    }},
    "handlers": {"file": {
        "class": "logging.FileHandler",
        "formatter": "precise",
        "filename": os.path.join(d, "homeserver.log"),
        "encoding": "utf8",
    }},
    "root": {"level": "WARNING", "handlers": ["file"]},
    "disable_existing_loggers": False,
}

with open(os.path.join(d, "log.config"), "w") as f:
    yaml.safe_dump(log_config, f, sort_keys=False)
with open(port_file, "w") as f:
    f.write(f"{port}\n")
# Written last: its presence means the workdir is fully configured.
tmp = os.path.join(d, "homeserver.yaml.tmp")
with open(tmp, "w") as f:
    yaml.safe_dump(config, f, sort_keys=False)
os.rename(tmp, os.path.join(d, "homeserver.yaml"))
EOF
}

# Registers the test users through the shared-secret admin API.
register_users() {
    local dir=$1 port=$2
    "$VENV/bin/python" - "$dir/homeserver.yaml" "http://127.0.0.1:$port" <<'EOF'
import hashlib, hmac, json, sys, urllib.error, urllib.request

import yaml

secret = yaml.safe_load(open(sys.argv[1]))["registration_shared_secret"].encode()
url = sys.argv[2] + "/_synapse/admin/v1/register"

for user, password in [("raven", "raven-pass"), ("alice", "alice-pass")]:
    nonce = json.load(urllib.request.urlopen(url))["nonce"]
    mac = hmac.new(secret, digestmod=hashlib.sha1)
    mac.update(b"\0".join([nonce.encode(), user.encode(), password.encode(), b"notadmin"]))
    body = {"nonce": nonce, "username": user, "password": password,
            "admin": False, "mac": mac.hexdigest()}
    req = urllib.request.Request(url, json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    try:
        urllib.request.urlopen(req)
    except urllib.error.HTTPError as e:
        answer = e.read().decode()
        # A user left over from an interrupted first start is fine.
        if "M_USER_IN_USE" not in answer:
            sys.exit(f"registering {user} failed: {e.code} {answer}")
EOF
}

# Prints the end of the server's output and log, for a failed start.
show_tail() {
    local dir=$1 f
    for f in "$dir/synapse.out" "$dir/homeserver.log"; do
        [[ -s $f ]] || continue
        echo "--- tail of $f ---" >&2
        tail -n 40 "$f" >&2
    done
}

start() {
    local dir=$1 port pid
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    ensure_venv
    lock_workdir "$dir"

    [[ -f $dir/homeserver.yaml ]] || generate_config "$dir" || die "could not write the config in $dir"
    port=$(<"$dir/port")
    local url="http://127.0.0.1:$port"

    launch "$dir" "$port" synapse.out \
        "$VENV/bin/python" -m synapse.app.homeserver -c homeserver.yaml
    pid=$(<"$dir/pid")

    local deadline=$((SECONDS + 60))
    until [[ $(curl -s -o /dev/null -w '%{http_code}' "$url/_matrix/client/versions") == 200 ]]; do
        if ! alive "$pid"; then
            echo "synapse.sh: error: Synapse (pid $pid) exited during startup" >&2
            show_tail "$dir"
            exit 1
        fi
        if ((SECONDS >= deadline)); then
            echo "synapse.sh: error: Synapse did not answer on $url within 60 s" >&2
            show_tail "$dir"
            stop_locked "$dir"
            exit 1
        fi
        sleep 0.1
    done

    if [[ ! -f $dir/users-registered ]]; then
        register_users "$dir" "$port" || die "could not register the test users"
        touch "$dir/users-registered"
    fi
    echo "$url"
}

main "$@"
