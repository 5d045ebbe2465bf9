//! Where a channel keeps a secret: the access token a Matrix password login gets is written by
//! `raven channels test matrix` (before any `raven up`) to a file only its owner can read, in a
//! data dir made private first, whatever the umask.

use crate::support;

use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use support::fake_http::{FakeHttp, Seen};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).permissions().mode() & 0o777
}

#[test]
fn a_matrix_login_s_token_is_kept_for_its_owner_only() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let homeserver = FakeHttp::start(Arc::new(|s: &Seen| match s.path.contains("/login") {
        true => (200, json!({"access_token": "syt_BOT_TOKEN_42"}).to_string()),
        false => (200, json!({"event_id": "$e1"}).to_string()),
    }));
    support::write_config(
        &dir,
        &format!(
            "[channels.matrix]\nenabled = true\nhomeserver = \"{}\"\nuser_id = \"@raven:fake\"\n\
             room_id = \"!r:fake\"\nallowed_users = [\"@me:fake\"]\n",
            homeserver.url
        ),
    );
    // As the user runs it, with the usual umask (files 0644, dirs 0755 unless made otherwise).
    let test = std::process::Command::new("sh")
        .args(["-c", "umask 022; exec \"$0\" --data-dir \"$1\" channels test matrix"])
        .arg(support::raven_bin())
        .arg(&dir)
        .env_remove("RAVEN_HOME")
        .env_remove("RAVEN_MATRIX_TOKEN")
        .env("RAVEN_MATRIX_PASSWORD", "bot-password")
        .output()
        .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&test.stdout), String::from_utf8_lossy(&test.stderr));
    assert!(test.status.success(), "{said}");
    let kept = dir.join("gateway/matrix.json");
    assert!(std::fs::read_to_string(&kept).unwrap().contains("syt_BOT_TOKEN_42"), "the login was kept");
    assert_eq!(mode(&kept), 0o600, "the token file");
    assert_eq!(mode(&dir.join("gateway")) & 0o077, 0, "its dir");
    assert_eq!(mode(&dir) & 0o077, 0, "the data dir");
}
