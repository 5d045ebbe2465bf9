"""A plain SMTP server on 127.0.0.1 that stores what it receives, for tests.

Usage: smtp_server.py <workdir>

Listens on the port written in <workdir>/port. Each accepted message is
stored as <workdir>/mail/<n>.eml (the raw bytes received, headers included)
next to <n>.json holding the envelope's mail_from and rcpt_tos; n counts
0001, 0002, ... and goes on from the highest number already there. The JSON
sidecar is written first, so a test that sees the .eml can read both.

If <workdir>/answer exists, its first line (an SMTP reply such as
"451 4.3.0 try again later") is sent instead of accepting the message; the
message is not stored and a JSON line is appended to <workdir>/refused.log.

AUTH PLAIN and LOGIN are offered without TLS and accept any credentials.
Runs until SIGTERM or SIGINT.
"""

import json
import os
import re
import signal
import sys
import threading

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult


def write_atomically(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.rename(tmp, path)


class Handler:
    def __init__(self, workdir):
        self.workdir = workdir
        self.mail_dir = os.path.join(workdir, "mail")
        os.makedirs(self.mail_dir, exist_ok=True)
        numbers = [
            int(m.group(1))
            for m in map(re.compile(r"^(\d+)\.eml$").match, os.listdir(self.mail_dir))
            if m
        ]
        self.count = max(numbers, default=0)

    def forced_answer(self):
        try:
            with open(os.path.join(self.workdir, "answer")) as f:
                return f.readline().strip() or None
        except FileNotFoundError:
            return None

    async def handle_DATA(self, server, session, envelope):
        answer = self.forced_answer()
        if answer is not None:
            line = json.dumps({
                "answer": answer,
                "mail_from": envelope.mail_from,
                "rcpt_tos": envelope.rcpt_tos,
            })
            with open(os.path.join(self.workdir, "refused.log"), "a") as f:
                f.write(line + "\n")
            return answer

        # Handlers run one at a time on the server's event loop, so the
        # counter needs no lock.
        self.count += 1
        base = os.path.join(self.mail_dir, f"{self.count:04d}")
        sidecar = {"mail_from": envelope.mail_from, "rcpt_tos": envelope.rcpt_tos}
        write_atomically(base + ".json", json.dumps(sidecar).encode())
        write_atomically(base + ".eml", envelope.content)
        return "250 OK"


def accept_any_credentials(server, session, envelope, mechanism, auth_data):
    return AuthResult(success=True)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: smtp_server.py <workdir>")
    workdir = os.path.abspath(sys.argv[1])
    with open(os.path.join(workdir, "port")) as f:
        port = int(f.read())

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())

    controller = Controller(
        Handler(workdir),
        hostname="127.0.0.1",
        port=port,
        auth_require_tls=False,
        authenticator=accept_any_credentials,
    )
    controller.start()
    print(f"listening on 127.0.0.1:{port}", flush=True)
    stop.wait()
    controller.stop()
    print("stopped", flush=True)


if __name__ == "__main__":
    main()
