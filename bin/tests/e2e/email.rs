//! The email channel against a real SMTP server (aiosmtpd, started by `scripts/smtp.sh`): a
//! nudge arrives with the right headers; a server answering 4xx keeps the message in the
//! outbox until it takes it; a 5xx makes it a dead letter.

use crate::support;

use std::path::Path;
use support::servers::Server;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn mails(smtp: &Server) -> Vec<String> {
    let mut files: Vec<_> = std::fs::read_dir(smtp.workdir.join("mail"))
        .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "eml")).collect())
        .unwrap_or_default();
    files.sort();
    files.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect()
}

fn header<'a>(mail: &'a str, name: &str) -> Option<&'a str> {
    let head = mail.split("\r\n\r\n").next()?;
    head.lines().find_map(|l| l.strip_prefix(&format!("{name}: ")))
}

fn send(dir: &Path, words: &str) -> std::process::Output {
    support::raven(dir, &["send", "email:me@example.org", words])
}

#[test]
fn a_nudge_arrives_by_mail_a_4xx_is_retried_and_a_5xx_is_a_dead_letter() {
    if support::servers::skipped(module_path!()) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (dir, smtp_dir) = (tmp.path().join("data"), tmp.path().join("smtp"));
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    let smtp = Server::start("smtp.sh", &smtp_dir);
    let (host, port) = smtp.address.rsplit_once(':').unwrap();
    let config = format!(
        "[gateway]\nlisten = \"127.0.0.1:0\"\n[policy.quiet_hours]\nstart = \"00:00\"\nend = \"00:00\"\n\
         [delivery]\ndefault_targets = [\"email:me@example.org\"]\noutbox_backoff_s = 1\n\
         [channels.email]\nenabled = true\nsmtp_host = \"{host}\"\nsmtp_port = {port}\nsecurity = \"none\"\n\
         from = \"Raven <raven@raven.test>\"\nto = \"me@example.org\"\n"
    );
    let _up = support::Killed(support::up(&dir, &config, &[]));
    support::wait_ready(&dir);
    support::gateway(&dir);

    let due = (support::now_local() + chrono::Duration::minutes(20)).format("%Y-%m-%d %H:%M");
    std::fs::write(dir.join("workspace/MEMORY.md"), format!("- [ ] Call the bank due: {due}\n")).unwrap();
    // Delivered now, or from the outbox a second later if the gateway was still connecting.
    let tick = support::raven(&dir, &["tick"]);
    assert!(text(&tick.stdout).contains("email:me@example.org"), "{}{}", text(&tick.stdout), text(&tick.stderr));
    support::eventually("the nudge by mail", || !mails(&smtp).is_empty());
    let mail = mails(&smtp).pop().unwrap();
    assert_eq!(header(&mail, "From"), Some("Raven <raven@raven.test>"), "{mail}");
    assert_eq!(header(&mail, "To"), Some("me@example.org"), "{mail}");
    assert_eq!(header(&mail, "Reply-To"), Some("Raven <raven@raven.test>"), "{mail}");
    assert!(
        header(&mail, "Subject").is_some_and(|s| s.contains("Call the bank") || s.starts_with("=?utf-8?")),
        "{mail}"
    );
    let id = header(&mail, "Message-ID").expect("a Message-ID");
    assert!(id.starts_with('<') && id.ends_with("@raven.test>"), "{id}");
    let thread = header(&mail, "References").expect("References");
    assert_eq!(header(&mail, "In-Reply-To"), Some(thread), "one thread: {mail}");
    assert!(mail.contains("Call the bank"), "{mail}");

    // 451: not taken now; it waits in the outbox and goes out once the server takes mail.
    std::fs::write(smtp_dir.join("answer"), "451 4.3.0 try again later\n").unwrap();
    let out = send(&dir, "first try refused for now");
    assert!(!out.status.success() && text(&out.stderr).contains("outbox"), "{}", text(&out.stderr));
    support::eventually("the 451", || {
        std::fs::read_to_string(smtp_dir.join("refused.log")).is_ok_and(|l| l.contains("451"))
    });
    std::fs::remove_file(smtp_dir.join("answer")).unwrap();
    support::eventually("the retried mail", || mails(&smtp).iter().any(|m| m.contains("first try refused for now")));
    // Settled once the retry writes its result back (just after the mail went).
    support::eventually("the retried mail settled", || {
        !text(&support::raven(&dir, &["outbox", "--json"]).stdout).contains("first try")
    });

    // 550: refused for good; a dead letter, never sent again.
    std::fs::write(smtp_dir.join("answer"), "550 5.7.1 refused\n").unwrap();
    let out = send(&dir, "refused for good");
    assert!(!out.status.success(), "{}", text(&out.stdout));
    let dead = support::raven(&dir, &["outbox", "--dead"]);
    assert!(
        text(&dead.stdout).contains("refused for good") || text(&dead.stdout).contains("550"),
        "{}",
        text(&dead.stdout)
    );
    std::fs::remove_file(smtp_dir.join("answer")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    assert!(!mails(&smtp).iter().any(|m| m.contains("refused for good")), "a dead letter is not retried");

    // Only to the user: another address (a model's made-up target, say) is refused.
    let out = support::raven(&dir, &["send", "email:someone@else.org", "the user's secrets"]);
    assert!(!out.status.success(), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("sends only to"), "{}", text(&out.stderr));
    assert!(!mails(&smtp).iter().any(|m| m.contains("the user's secrets")));
}
