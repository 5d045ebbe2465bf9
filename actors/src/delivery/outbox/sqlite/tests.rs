use super::*;
use crate::delivery::outbox::MemoryOutbox;
use chrono::{Duration, TimeZone};
use proptest::prelude::*;
use raven_proto::OutboundText;

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap()
}

fn entry(id: &str, content: &str, at: DateTime<Utc>, ttl: Option<i64>) -> OutboxEntry {
    OutboxEntry {
        text: OutboundText::proactive(id, "webhook", "ann", content),
        attempts: 1,
        last_error: "down".into(),
        queued_at: at,
        next_attempt_at: at + Duration::seconds(1),
        lease: None,
        fire: None,
        said: None,
        expires_at: ttl.map(|s| at + Duration::seconds(s)),
    }
}

fn open(dir: &Path) -> SqliteOutbox {
    let (db, _) = Database::open(&dir.join("state.db")).unwrap();
    SqliteOutbox::open(Arc::new(db), &dir.join("outbox.json")).unwrap()
}

/// One step of the outbox's life, as a retry pass or a sender takes it.
#[derive(Debug, Clone)]
enum Op {
    Admit { id: u8, text: u8, ttl: Option<u8> },
    Refuse { id: u8 },
    Pass { deliver: bool, refuse: bool },
    Due,
    Drop { id: u8 },
    DropDead,
    Later(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..12, 0u8..6, proptest::option::of(0u8..30)).prop_map(|(id, text, ttl)| Op::Admit { id, text, ttl }),
        1 => (0u8..12).prop_map(|id| Op::Refuse { id }),
        3 => (any::<bool>(), any::<bool>()).prop_map(|(deliver, refuse)| Op::Pass { deliver, refuse }),
        1 => Just(Op::Due),
        1 => (0u8..12).prop_map(|id| Op::Drop { id }),
        1 => Just(Op::DropDead),
        2 => (1u8..20).prop_map(Op::Later),
    ]
}

/// Applies `op` at `now` to `store`; what a caller sees of it.
fn apply(store: &dyn OutboxStore, op: &Op, now: &mut DateTime<Utc>) -> String {
    match op {
        Op::Admit { id, text, ttl } => {
            let e = entry(&format!("d{id}"), &format!("text {text}"), *now, ttl.map(i64::from));
            format!("{:?}", store.admit(e, 5, *now).map_err(|e| e.to_string()))
        }
        Op::Refuse { id } => {
            let e = entry(&format!("r{id}"), "refused", *now, None);
            format!("{:?}", store.refuse(e, *now, "no".into()).map_err(|e| e.to_string()))
        }
        Op::Pass { deliver, refuse } => {
            let leased = store.lease(*now, 7, *now + Duration::minutes(5)).unwrap();
            let tries = leased
                .due
                .iter()
                .enumerate()
                .map(|(i, e)| match (i % 2 == 0 && *deliver, i % 3 == 0 && *refuse) {
                    (true, _) => Settled::Delivered(e.clone()),
                    (false, true) => Settled::Refused(e.clone(), "gone".into()),
                    (false, false) => Settled::Failed(OutboxEntry {
                        attempts: e.attempts + 1,
                        next_attempt_at: *now + Duration::seconds(2),
                        ..e.clone()
                    }),
                })
                .collect();
            store.settle(tries, *now).unwrap();
            format!("buried {:?}, due {:?}", leased.buried, leased.due)
        }
        Op::Due => format!("{:?}", store.make_due(&["webhook".to_owned()], *now).is_ok()),
        Op::Drop { id } => format!("{:?}", store.drop_id(&format!("d{id}")).unwrap()),
        Op::DropDead => format!("{:?}", store.drop_dead().unwrap()),
        Op::Later(s) => {
            *now += Duration::seconds(i64::from(*s));
            format!("{:?}", store.has_work(*now).unwrap())
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// The database keeps the rules of [`Outbox`]: any mix of steps leaves it as the value
    /// would be, and every step answers the same.
    #[test]
    fn the_database_keeps_the_outbox_rules(ops in proptest::collection::vec(op(), 1..40)) {
        let tmp = tempfile::tempdir().unwrap();
        let (sql, memory) = (open(tmp.path()), MemoryOutbox::default());
        let (mut a, mut b) = (t0(), t0());
        for op in &ops {
            prop_assert_eq!(apply(&sql, op, &mut a), apply(&memory, op, &mut b), "{:?}", op);
            prop_assert_eq!(sql.snapshot().unwrap(), memory.snapshot().unwrap(), "after {:?}", op);
            prop_assert_eq!(sql.levels().unwrap(), memory.levels().unwrap());
        }
    }
}

#[test]
fn an_earlier_outbox_json_is_imported_once_and_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let mut old = Outbox::default();
    old.admit(entry("w1", "waiting", t0(), None), 10, t0());
    old.refused(entry("x1", "dead", t0(), None), t0(), "refused".into());
    let legacy = tmp.path().join("outbox.json");
    let bytes = serde_json::to_vec(&serde_json::json!({ SECTION: old })).unwrap();
    std::fs::write(&legacy, &bytes).unwrap();

    let store = open(tmp.path());
    assert_eq!(store.snapshot().unwrap(), old);
    assert!(!legacy.exists());
    assert_eq!(std::fs::read(tmp.path().join("outbox.json.migrated")).unwrap(), bytes, "kept byte for byte");
    // Opened again, nothing is imported twice.
    assert_eq!(open(tmp.path()).snapshot().unwrap(), old);
}

/// Bytes a step appends to the write-ahead log, with the log emptied first: what it costs
/// the disk, whatever has accumulated.
fn wal_bytes(dir: &Path, step: impl FnOnce()) -> u64 {
    let conn = rusqlite::Connection::open(dir.join("state.db")).unwrap();
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).unwrap();
    step();
    std::fs::metadata(dir.join("state.db-wal")).map(|m| m.len()).unwrap_or(0)
}

#[test]
fn a_step_writes_what_it_changes_not_the_dead_letters() {
    let tmp = tempfile::tempdir().unwrap();
    let store = open(tmp.path());
    for i in 0..DEAD_KEPT + 5 {
        let mut e = entry(&format!("x{i}"), &format!("dead text {i} {}", "x".repeat(600)), t0(), None);
        e.last_error = "no one is watching the terminal".repeat(8);
        store.refuse(e, t0(), "expired".repeat(20)).unwrap();
    }
    for i in 0..200 {
        store.admit(entry(&format!("w{i}"), &format!("waiting {i}"), t0(), Some(60)), 10_000, t0()).unwrap();
    }
    assert_eq!(store.levels().unwrap(), Levels { waiting: 200, dead: DEAD_KEPT as u64 });
    let limit = 32 * 1024;
    let now = t0() + Duration::seconds(1);
    let admitted = wal_bytes(tmp.path(), || store.admit(entry("new", "new text", now, None), 10_000, now).unwrap());
    assert!(admitted <= limit, "a message queued wrote {admitted} bytes");
    let mut leased = Vec::new();
    let lease = wal_bytes(tmp.path(), || leased = store.lease(now, 1, now + Duration::minutes(5)).unwrap().due);
    assert_eq!(leased.len(), 200, "every waiting one was due");
    let tries: Vec<_> = leased.iter().take(1).cloned().map(|e| Settled::Refused(e, "gone".into())).collect();
    let settled = wal_bytes(tmp.path(), || store.settle(tries, now).unwrap());
    assert!(settled <= limit, "a refusal buried among {DEAD_KEPT} dead letters wrote {settled} bytes");
    // Leasing 200 rewrites 200 rows: what it changes, with the dead letters left alone.
    assert!(lease < 200 * 1024, "leasing 200 wrote {lease} bytes");
    assert_eq!(store.levels().unwrap().dead, DEAD_KEPT as u64, "the oldest letter made room");
}
