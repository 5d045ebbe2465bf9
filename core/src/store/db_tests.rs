use super::db::{Database, DbError};
use std::time::Duration;

fn names(dir: &std::path::Path) -> Vec<String> {
    let mut out: Vec<_> =
        std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    out.sort();
    out
}

#[test]
fn a_file_that_is_not_a_database_is_moved_aside_and_a_clean_one_started() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("state.db");
    let garbage = b"this was never a database, but it is the user's bytes".repeat(100);
    std::fs::write(&path, &garbage).unwrap();
    let (db, note) = Database::open(&path).unwrap();
    let note = note.expect("the move is reported");
    assert!(note.contains("corrupt") && note.contains("state.db.corrupt-"), "{note}");
    assert_eq!(db.check().unwrap(), ["ok"]);
    let kept: Vec<_> = names(tmp.path()).into_iter().filter(|n| n.starts_with("state.db.corrupt-")).collect();
    assert_eq!(kept.len(), 1, "{:?}", names(tmp.path()));
    assert_eq!(std::fs::read(tmp.path().join(&kept[0])).unwrap(), garbage, "kept byte for byte");
}

#[test]
fn a_read_leaves_no_trace_and_never_makes_a_database() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("state.db");
    assert!(Database::open_read_only(&path).unwrap().is_none());
    assert!(names(tmp.path()).is_empty(), "nothing made");
    {
        let (db, _) = Database::open(&path).unwrap();
        db.ensure_schema("CREATE TABLE IF NOT EXISTS t (x INTEGER)").unwrap();
        db.write(|tx| tx.execute("INSERT INTO t VALUES (7)", []).map_err(|e| db.error(e))).unwrap();
    }
    let before: Vec<_> =
        names(tmp.path()).into_iter().map(|n| (n.clone(), std::fs::read(tmp.path().join(n)).unwrap())).collect();
    let db = Database::open_read_only(&path).unwrap().unwrap();
    let x: i64 = db.read(|c| c.query_row("SELECT x FROM t", [], |r| r.get(0)).map_err(|e| db.error(e))).unwrap();
    assert_eq!(x, 7);
    assert_eq!(db.check().unwrap(), ["ok"]);
    drop(db);
    let after: Vec<_> =
        names(tmp.path()).into_iter().map(|n| (n.clone(), std::fs::read(tmp.path().join(n)).unwrap())).collect();
    assert_eq!(after, before, "no file made or changed");
}

#[test]
fn a_reader_sees_a_live_writers_commits_and_a_writer_waits_then_fails_plainly() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("state.db");
    let (writer, _) = Database::open(&path).unwrap();
    let writer = writer.with_busy_timeout(Duration::from_millis(20)).unwrap();
    writer.ensure_schema("CREATE TABLE IF NOT EXISTS t (x INTEGER)").unwrap();
    writer.write(|tx| tx.execute("INSERT INTO t VALUES (1)", []).map_err(|e| writer.error(e))).unwrap();
    let reader = Database::open_read_only(&path).unwrap().unwrap();
    let count = |db: &Database| -> i64 {
        db.read(|c| c.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).map_err(|e| db.error(e))).unwrap()
    };
    assert_eq!(count(&reader), 1);
    // A peer holds the write lock: a second writer gives up after the busy timeout, changing nothing.
    let (peer, _) = Database::open(&path).unwrap();
    let (held, gave_up) = (std::sync::Barrier::new(2), std::sync::Barrier::new(2));
    std::thread::scope(|s| {
        s.spawn(|| {
            peer.write(|tx| {
                tx.execute("INSERT INTO t VALUES (2)", []).map_err(|e| peer.error(e))?;
                held.wait();
                // Held past the writer's 20 ms: until the writer gave up.
                gave_up.wait();
                Ok(())
            })
            .unwrap();
        });
        held.wait();
        assert_eq!(count(&reader), 1, "a reader never waits for a writer, and sees only commits");
        let refused = writer.write(|tx| tx.execute("INSERT INTO t VALUES (3)", []).map_err(|e| writer.error(e)));
        assert!(matches!(refused, Err(DbError::Busy { .. })), "{refused:?}");
        assert!(refused.unwrap_err().to_string().contains("nothing was changed"));
        gave_up.wait();
    });
    assert_eq!(count(&reader), 2, "the peer's commit, not the refused one");
}

#[cfg(unix)]
#[test]
fn a_new_database_and_its_log_files_are_only_the_owners() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("state.db");
    let (db, _) = Database::open(&path).unwrap();
    db.ensure_schema("CREATE TABLE IF NOT EXISTS t (x INTEGER)").unwrap();
    db.write(|tx| tx.execute("INSERT INTO t VALUES (1)", []).map_err(|e| db.error(e))).unwrap();
    let names = names(tmp.path());
    assert!(names.contains(&"state.db-wal".to_owned()), "{names:?}");
    for name in names {
        let mode = std::fs::metadata(tmp.path().join(&name)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & 0o077, 0, "{name} is {mode:o}");
    }
}
