//! A peer that holds the state locks freezes nothing: while another process holds every state
//! file's lock and the state database's write lock, `raven status`, a gateway POST and a REPL
//! line are each answered (a reply, or an error naming the store after the bounded wait)
//! within 10 s, before the locks are let go.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use support::tmux::Tmux;

const SECRET: &str = "lock-secret";

/// Every lock of the state store (the ledger, the outbox, the queues), as a peer would hold it.
fn state_locks(dir: &Path) -> Vec<PathBuf> {
    let sentinel = dir.join("sentinel");
    let mut locks = vec![sentinel.join("state.json.lock")];
    if let Ok(entries) = std::fs::read_dir(sentinel.join("state")) {
        locks.extend(
            entries
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .map(|p| raven_lock(&p)),
        );
    }
    locks
}

fn raven_lock(p: &Path) -> PathBuf {
    let mut name = p.file_name().unwrap().to_os_string();
    name.push(".lock");
    p.with_file_name(name)
}

/// A helper process holding the state database's write lock (an open `BEGIN IMMEDIATE`, as a
/// writer in another process takes it) until killed.
fn hold_database(dir: &Path) -> support::Killed {
    use std::io::BufRead;
    let script = "import sqlite3, sys\n\
                  c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)\n\
                  c.execute('BEGIN IMMEDIATE')\n\
                  print('held', flush=True)\n\
                  sys.stdin.read()\n";
    // Held until its stdin closes (when it is killed): a sleep would end early under a faked clock.
    let mut child = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(dir.join("state.db"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "held", "the database lock is held");
    support::Killed(child)
}

/// A helper process holding `locks` (flock, as the store takes them) until killed.
fn hold(locks: &[PathBuf]) -> support::Killed {
    let mut cmd = String::from("sleep 120");
    for l in locks {
        cmd = format!("flock -x {} -c '{}'", l.display(), cmd.replace('\'', "'\\''"));
    }
    let child: Child = Command::new("sh").arg("-c").arg(&cmd).stdout(Stdio::null()).spawn().unwrap();
    // Held once a non-blocking attempt on the outermost lock fails.
    support::eventually("the lock to be held", || {
        !Command::new("flock").arg("-n").arg(&locks[locks.len() - 1]).arg("true").status().unwrap().success()
    });
    support::Killed(child)
}

#[test]
fn a_held_state_lock_freezes_neither_status_nor_the_gateway_nor_the_repl() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = "[delivery]\njsonl_path = \"out.jsonl\"\n[policy.quiet_hours]\nstart = \"00:00\"\nend = \"00:00\"\n";
    let up = support::Killed(support::up(dir, config, &[("RAVEN_GATEWAY_SECRET", SECRET)]));
    support::wait_ready(dir);
    let (addr, _) = support::gateway(dir);
    let t = Tmux::new("locks");
    t.start(&format!("{} --data-dir {} repl", support::raven_bin().display(), dir.display()));
    t.wait_for(&format!("attached to the supervisor (pid {})", up.0.id()));
    // Something in every state file, so every lock exists.
    assert!(support::raven(dir, &["send", "jsonl:warm", "warming up"]).status.success());

    let holder = hold(&state_locks(dir));
    let database = hold_database(dir);
    let start = Instant::now();
    let (tx, rx) = mpsc::channel();
    let status = {
        let (tx, dir) = (tx.clone(), dir.to_owned());
        std::thread::spawn(move || {
            let out = support::raven(&dir, &["status"]);
            let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            tx.send(("status", out.status.success() || said.contains("state"), said, start.elapsed())).unwrap();
        })
    };
    let post = {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let body = br#"{"channel": "jsonl", "chat_id": "ann", "text": "hello there"}"#;
            let (code, body) = support::http(&addr, "POST", "/inbound", Some(SECRET), body);
            tx.send(("gateway POST", code == 200 || body.contains("state"), body, start.elapsed())).unwrap();
        })
    };
    t.send("hello from the repl");
    let screen = t.wait_for("raven> No language model is configured");
    tx.send(("REPL line", true, screen, start.elapsed())).unwrap();
    status.join().unwrap();
    post.join().unwrap();
    drop(tx);
    let answers: Vec<_> = rx.iter().collect();
    // All three came while the locks were still held.
    let (mut holder, mut database) = (holder, database);
    assert!(holder.0.try_wait().unwrap().is_none(), "the lock holder ended early");
    assert!(database.0.try_wait().unwrap().is_none(), "the database lock holder ended early");
    for (what, answered, said, took) in &answers {
        assert!(*answered, "{what} was not answered: {said}");
        assert!(*took <= Duration::from_secs(10), "{what} took {took:?} with the lock held");
    }
    assert_eq!(answers.len(), 3);
    drop((holder, database));
}
