//! The fault suite, part one: a panic injected into each actor of the design card through the
//! test-only fault switch (`RAVEN_FAULT=<actor>:<n>`), in a real `raven up`. The actor
//! restarts, the next tick completes, and `raven status` shows the restart; a fault that
//! keeps firing (`<actor>:<n>+`) is reported as a crash loop, and the rest of the engine
//! keeps serving.

use crate::support;

use std::path::Path;

const CONFIG: &str = "[gateway]\nenabled = false\n[policy.quiet_hours]\nstart = \"00:00\"\nend = \"00:00\"\n\
                      [delivery]\njsonl_path = \"out.jsonl\"\n[executor]\ndefer_poll_s = 1\n";

/// (restarts, state) of `actor` in `raven status`.
fn row(dir: &Path, actor: &str) -> Option<(u64, String)> {
    let status = support::wait_ready(dir);
    let cols: Vec<String> = status
        .lines()
        .find(|l| l.split_whitespace().next() == Some(actor))?
        .split_whitespace()
        .map(Into::into)
        .collect();
    Some((cols[5].parse().ok()?, cols.last()?.clone()))
}

/// Requests that reach every actor: a tick (runner, assembler, policy, planner), a user turn
/// (spine, injector), a send (hub), a status (cron, heartbeat); the loops reach the rest.
fn traffic(dir: &Path, n: usize) {
    let _ = support::raven(dir, &["tick"]);
    let _ = support::raven(dir, &["say", &format!("hello {n}")]);
    let _ = support::raven(dir, &["send", "jsonl:me", &format!("ping {n}")]);
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = support::raven(dir, args);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "raven {args:?}: {text}");
    text
}

#[test]
fn a_panic_in_each_actor_restarts_it_and_the_next_tick_completes() {
    for actor in support::ACTORS {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let _up = support::Killed(support::up(dir, CONFIG, &[("RAVEN_FAULT", &format!("{actor}:1"))]));
        support::wait_ready(dir);
        let mut n = 0;
        support::eventually(&format!("{actor} to restart"), || {
            n += 1;
            traffic(dir, n);
            row(dir, actor).is_some_and(|(restarts, state)| restarts == 1 && state == "ok")
        });
        let tick = ok(dir, &["tick"]);
        assert!(tick.contains("route:"), "{actor}: {tick}");
        assert!(ok(dir, &["say", "still there?"]).contains("No language model"), "{actor}");
    }
}

#[test]
fn a_fault_that_keeps_firing_is_reported_as_a_crash_loop_and_the_rest_serves() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let _up = support::Killed(support::up(dir, CONFIG, &[("RAVEN_FAULT", "DeliveryHub:1+")]));
    support::wait_ready(dir);
    let mut n = 0;
    support::eventually("the crash loop", || {
        n += 1;
        let _ = support::raven(dir, &["send", "jsonl:me", &format!("ping {n}")]);
        row(dir, "DeliveryHub").is_some_and(|(_, state)| state == "CRASH-LOOP")
    });
    let sent = support::raven(dir, &["send", "jsonl:me", "one more"]);
    assert!(!sent.status.success(), "a crash-looping hub does not pretend to deliver");
    assert!(
        String::from_utf8_lossy(&sent.stderr).contains("crash-looping"),
        "{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    assert!(ok(dir, &["tick"]).contains("route:"), "the tick still completes");
    let metrics = ok(dir, &["metrics"]);
    assert!(metrics.contains("raven_actor_crash_loop{actor=\"DeliveryHub\"} 1"), "{metrics}");
}

/// A webhook outlet nobody listens on: what is sent to `webhook:…` waits in the outbox.
fn closed_webhook(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let config = format!("[delivery]\nwebhook_url = \"http://{closed}/hook\"\nwebhook_attempts = 0\n");
    support::write_config(dir, &config);
}

/// `raven <args>` with the file-size limit at `blocks` (a full disk for every write past it;
/// SIGXFSZ ignored, so the write fails with an error instead of killing the process).
fn on_a_full_disk(dir: &Path, blocks: u32, args: &[&str]) -> std::process::Output {
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    let script = format!(
        "trap '' XFSZ; ulimit -f {blocks}; exec '{}' --data-dir '{}' {}",
        support::raven_bin().display(),
        dir.display(),
        quoted.join(" ")
    );
    std::process::Command::new("sh").args(["-c", &script]).env_remove("RAVEN_HOME").output().unwrap()
}

#[test]
fn a_full_disk_is_a_clear_error_and_leaves_every_file_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    closed_webhook(dir);
    // Files bigger than the limit: every rewrite of them fails.
    for i in 0..60 {
        ok(dir, &["cron", "add", "--in", "1h", &format!("job number {i}, padded to make the file grow")]);
        let _ = support::raven(dir, &["send", "webhook:42", &format!("queued message {i}, padded as well")]);
    }
    let jobs = dir.join("cron/jobs.json");
    let waiting = || ok(dir, &["outbox", "--json"]);
    let before = (std::fs::read(&jobs).unwrap(), waiting());
    assert!(before.0.len() > 16 * 1024, "jobs.json outgrows the limit");
    assert_eq!(serde_json::from_str::<Vec<serde_json::Value>>(&before.1).unwrap().len(), 60);

    let add = on_a_full_disk(dir, 16, &["cron", "add", "--in", "2h", "one more"]);
    assert_eq!(add.status.code(), Some(2));
    let err = String::from_utf8_lossy(&add.stderr);
    assert!(err.contains("jobs.json") && err.contains("File too large"), "{err}");
    // The state database cannot even be opened for writing there: said plainly, nothing sent.
    let send = on_a_full_disk(dir, 16, &["send", "webhook:42", "and another"]);
    assert_eq!(send.status.code(), Some(2));
    let err = String::from_utf8_lossy(&send.stderr);
    assert!(err.contains("state.db") && err.contains("is the disk full"), "{err}");

    assert_eq!((std::fs::read(&jobs).unwrap(), waiting()), before, "no file was torn, nothing was lost");
    assert!(ok(dir, &["state", "check"]).starts_with("ok: "), "the database is whole");
    let stray: Vec<_> = support::files_under(dir)
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().contains(".tmp-")))
        .collect();
    assert!(stray.is_empty(), "no temp file left behind: {stray:?}");
    assert!(ok(dir, &["cron", "list"]).contains("job number 59"), "and the data is still all there");
}

/// Every file below `root` with its bytes, to compare a tree before and after.
#[cfg(unix)]
fn snapshot(root: &Path) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    for entry in std::fs::read_dir(root).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(snapshot(&path));
        } else {
            out.insert(path.clone(), std::fs::read(&path).unwrap_or_default());
        }
    }
    out
}

/// Applies `f` to `root` and everything below it, children first.
#[cfg(unix)]
fn walk(root: &Path, f: &dyn Fn(&Path)) {
    if root.is_dir() {
        for entry in std::fs::read_dir(root).unwrap().flatten() {
            walk(&entry.path(), f);
        }
    }
    f(root);
}

/// `chmod -R a-w` (or back to `u+w`).
#[cfg(unix)]
fn writable(root: &Path, yes: bool) {
    use std::os::unix::fs::PermissionsExt;
    let set = |p: &Path| {
        let mode = std::fs::metadata(p).unwrap().permissions().mode();
        let mode = if yes { mode | 0o200 } else { mode & !0o222 };
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    // Parents last on the way down (read-only), first on the way back (writable).
    if yes {
        set(root);
    }
    walk(root, &set);
}

/// A data dir its owner made read-only: what reads works, what writes fails with an error
/// naming the file, `raven up` refuses to start, and not one byte of the dir changes. Root
/// ignores permission bits, so as root the commands run as `nobody` on a dir it owns.
#[cfg(unix)]
#[test]
fn a_read_only_data_dir_is_a_clear_error_and_leaves_every_file_whole() {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::process::CommandExt;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    closed_webhook(&dir);
    for i in 0..3 {
        ok(&dir, &["cron", "add", "--in", "1h", &format!("job number {i}")]);
    }
    let _ = support::raven(&dir, &["send", "webhook:42", "queued for later"]);
    let mut bin = support::raven_bin();
    let as_root = std::fs::metadata(tmp.path()).unwrap().uid() == 0;
    if as_root {
        // Where `nobody` can run it, whatever the checkout's permissions.
        let copy = tmp.path().join("raven");
        std::fs::copy(&bin, &copy).unwrap();
        bin = copy;
        walk(tmp.path(), &|p| std::os::unix::fs::chown(p, Some(65534), Some(65534)).unwrap());
    }
    writable(&dir, false);
    let before = snapshot(&dir);
    let run = |args: &[&str]| {
        let mut c = std::process::Command::new(&bin);
        c.env("RAVEN_CLI_ALWAYS", "1");
        c.arg("--data-dir").arg(&dir).args(args).env_remove("RAVEN_HOME");
        if as_root {
            c.uid(65534).gid(65534);
        }
        c
    };
    let text = |o: &std::process::Output| {
        format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
    };

    // A process another test forked while the copy was open for writing holds it a moment:
    // the first run of the copy may find it busy (ETXTBSY) and is tried again.
    let list = (0..200)
        .find_map(|_| match run(&["cron", "list"]).output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(5));
                None
            }
            other => Some(other.unwrap()),
        })
        .expect("the copied binary stays busy");
    assert!(list.status.success() && text(&list).contains("job number 2"), "reads still work: {}", text(&list));
    let add = run(&["cron", "add", "--in", "2h", "one more"]).output().unwrap();
    assert_eq!(add.status.code(), Some(2), "{}", text(&add));
    assert!(text(&add).contains("jobs.json") && text(&add).contains("Permission denied"), "{}", text(&add));
    let send = run(&["send", "webhook:42", "and another"]).output().unwrap();
    assert_eq!(send.status.code(), Some(2), "{}", text(&send));
    assert!(text(&send).contains("not writable") && text(&send).contains("Permission denied"), "{}", text(&send));
    // A message the terminal would show but the conversation could not keep is not sent.
    for args in [&["send", "cli:local", "shown, never kept"][..], &["say", "hello there"][..]] {
        let o = run(args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "raven {args:?}: {}", text(&o));
        assert!(text(&o).contains("not writable") && !text(&o).contains("shown, never kept"), "{}", text(&o));
    }
    // The REPL, with no supervisor to attach to, would run an engine here: it says why not.
    let repl = run(&["repl"]).stdin(std::process::Stdio::null()).output().unwrap();
    assert_eq!(repl.status.code(), Some(2), "{}", text(&repl));
    assert!(
        text(&repl).contains("the data dir is not writable") && text(&repl).contains("Permission denied"),
        "{}",
        text(&repl)
    );
    let mut up = support::Killed(
        run(&["up"]).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped()).spawn().unwrap(),
    );
    let mut waited = 0;
    let code = loop {
        if let Some(status) = up.0.try_wait().unwrap() {
            break status.code();
        }
        assert!(waited < 4000, "raven up kept running on a read-only data dir");
        std::thread::sleep(std::time::Duration::from_millis(5));
        waited += 1;
    };
    let mut err = String::new();
    std::io::Read::read_to_string(up.0.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("raven.lock") && err.contains("Permission denied"), "{err}");

    assert_eq!(snapshot(&dir), before, "no file was added, removed or changed");
    writable(&dir, true);
}
