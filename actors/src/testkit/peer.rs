//! A peer process holding the state database's write lock, as a test needs one.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

/// A connection on another thread that holds the database's write lock from
/// [`HeldDatabase::take`] until [`HeldDatabase::release`] (or 4 s, so a test that cannot go on
/// meanwhile fails rather than hangs).
pub(crate) struct HeldDatabase {
    release: mpsc::Sender<()>,
    peer: std::thread::JoinHandle<()>,
}

impl HeldDatabase {
    pub(crate) fn take(db: PathBuf) -> HeldDatabase {
        let (held, is_held) = mpsc::channel();
        let (release, let_go) = mpsc::channel::<()>();
        let peer = std::thread::spawn(move || {
            let conn = rusqlite::Connection::open(db).unwrap();
            conn.execute_batch("BEGIN IMMEDIATE").unwrap();
            held.send(()).unwrap();
            let _ = let_go.recv_timeout(Duration::from_secs(4));
            conn.execute_batch("ROLLBACK").unwrap();
        });
        is_held.recv().unwrap();
        HeldDatabase { release, peer }
    }

    pub(crate) fn release(self) {
        let _ = self.release.send(());
        self.peer.join().unwrap();
    }
}
