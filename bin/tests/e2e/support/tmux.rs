//! A tmux server per test, to drive the REPL through a real pty.

use std::process::Command;
use std::time::{Duration, Instant};

/// One tmux server per test, on its own socket name.
pub struct Tmux(String);

impl Tmux {
    pub fn new(tag: &str) -> Tmux {
        assert!(Command::new("tmux").arg("-V").output().is_ok(), "tmux is needed to drive the REPL through a pty");
        Tmux(format!("raven-{tag}-{}", std::process::id()))
    }

    pub fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux").arg("-L").arg(&self.0).args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn start(&self, cmd: &str) {
        self.run(&["new-session", "-d", "-s", "t", "-x", "200", "-y", "50", cmd]);
    }

    pub fn send(&self, line: &str) {
        self.run(&["send-keys", "-t", "t", line, "Enter"]);
    }

    /// Keys as tmux names them (`C-c`, `C-d`), or text typed without Enter.
    pub fn keys(&self, keys: &str) {
        self.run(&["send-keys", "-t", "t", keys]);
    }

    /// Whether the session (the program it runs) has ended.
    pub fn ended(&self) -> bool {
        !self.run(&["list-sessions"]).contains("t:")
    }

    /// Waits until the screen shows `text` (20 s at most) and returns the screen.
    pub fn wait_for(&self, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let screen = self.run(&["capture-pane", "-t", "t", "-p", "-J"]);
            if screen.contains(text) {
                return screen;
            }
            assert!(Instant::now() < deadline, "never saw {text:?} on:\n{screen}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux").arg("-L").arg(&self.0).arg("kill-server").output();
    }
}
