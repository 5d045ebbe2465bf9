//! The Telegram channel from outside: `raven up` with `[channels.telegram]` pointed at a local
//! HTTP server speaking the Bot API's JSON. An update becomes a turn and its reply is sent; a
//! stranger gets no answer; a nudge carries the feedback buttons, and a 429 with
//! `retry_after` on its way is waited out; a 👍 tap records `accepted` and a "stop" tap
//! `dismissed` (then `policy explain` holds the next nudge at layer 7); a killed gateway comes
//! back at the persisted offset and handles no update twice.

use crate::support;

use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use support::fake_http::{FakeHttp, Seen};

pub(super) const TOKEN: &str = "123:test-token";

/// The bot's side: the updates it has for the poller, and how many 429s it still owes.
#[derive(Default)]
pub(super) struct Bot {
    updates: Mutex<Vec<Value>>,
    throttle: Mutex<u32>,
}

impl Bot {
    /// The bot and the server speaking for it.
    pub(super) fn serve() -> (Arc<Bot>, FakeHttp) {
        let bot = Arc::new(Bot::default());
        let b = bot.clone();
        (bot, FakeHttp::start(Arc::new(move |req: &Seen| b.answer(req))))
    }

    pub(super) fn push(&self, update: Value) {
        self.updates.lock().unwrap().push(update);
    }

    fn answer(&self, req: &Seen) -> (u16, String) {
        let method = req.path.rsplit('/').next().unwrap_or_default();
        assert!(req.path.starts_with(&format!("/bot{TOKEN}/")), "the token is in the path: {}", req.path);
        let ok = |result: Value| (200, json!({"ok": true, "result": result}).to_string());
        match method {
            "getUpdates" => {
                let offset = req.body["offset"].as_i64().unwrap_or(0);
                let fresh = || -> Vec<Value> {
                    let all = self.updates.lock().unwrap();
                    all.iter().filter(|u| u["update_id"].as_i64().unwrap() >= offset).cloned().collect()
                };
                // A short long poll: the test's updates arrive within it.
                for _ in 0..20 {
                    let f = fresh();
                    if !f.is_empty() {
                        return ok(Value::Array(f));
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                ok(json!([]))
            }
            "sendMessage" => {
                let mut owed = self.throttle.lock().unwrap();
                if *owed > 0 {
                    *owed -= 1;
                    let slow = json!({"ok": false, "error_code": 429, "description": "Too Many Requests: retry after 1",
                                      "parameters": {"retry_after": 1}});
                    return (429, slow.to_string());
                }
                ok(json!({"message_id": 7, "chat": {"id": req.body["chat_id"]}}))
            }
            "answerCallbackQuery" => ok(json!(true)),
            _ => (404, json!({"ok": false, "error_code": 404, "description": "Not Found"}).to_string()),
        }
    }
}

pub(super) fn message(id: i64, from: i64, text: &str) -> Value {
    json!({"update_id": id, "message": {"message_id": id, "from": {"id": from, "is_bot": false, "first_name": "U"},
           "chat": {"id": from, "type": "private"}, "date": 0, "text": text}})
}

pub(super) fn tap(id: i64, from: i64, data: &str) -> Value {
    json!({"update_id": id, "callback_query": {"id": format!("cq{id}"), "from": {"id": from, "is_bot": false, "first_name": "U"},
           "message": {"message_id": 7, "chat": {"id": from, "type": "private"}, "date": 0}, "data": data}})
}

pub(super) fn sent_to(fake: &FakeHttp, chat: &str) -> Vec<String> {
    let sent = fake.requests("/sendMessage");
    sent.iter()
        .filter(|s| s.body["chat_id"] == chat)
        .map(|s| s.body["text"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// No quiet hours (the tests run on the real clock), `more`, and Telegram at `fake` with
/// user 42 allowed.
pub(super) fn config(fake: &FakeHttp, more: &str) -> String {
    format!(
        "[gateway]\nlisten = \"127.0.0.1:0\"\n[policy.quiet_hours]\nstart = \"00:00\"\nend = \"00:00\"\n{more}\
         [channels.telegram]\nenabled = true\napi_base = \"{}\"\nallowed_users = [\"42\"]\npoll_timeout_s = 1\n",
        fake.url
    )
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_bot_that_talks_taps_waits_out_429_and_resumes_at_its_offset() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (bot, fake) = Bot::serve();
    let config = config(&fake, "[delivery]\ndefault_targets = [\"telegram:42\"]\n");
    let _up = support::Killed(support::up(dir, &config, &[("RAVEN_TELEGRAM_TOKEN", TOKEN)]));
    support::wait_ready(dir);
    let (_, gateway_pid) = support::gateway(dir);

    // An update becomes a turn; its reply goes back to the chat.
    bot.push(message(1, 42, "hello there"));
    support::eventually("the reply", || sent_to(&fake, "42").iter().any(|t| t.contains("No language model")));

    // A stranger's message gets no answer; the next allowed one does.
    bot.push(message(2, 99, "let me in"));
    bot.push(message(3, 42, "still there?"));
    support::eventually("the second reply", || sent_to(&fake, "42").len() >= 2);
    assert!(sent_to(&fake, "99").is_empty(), "a stranger is never answered");

    // A nudge with its buttons; the Bot API's 429 on the way is waited out.
    *bot.throttle.lock().unwrap() = 1;
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    let due = (support::now_local() + chrono::Duration::minutes(20)).format("%Y-%m-%d %H:%M");
    std::fs::write(dir.join("workspace/MEMORY.md"), format!("- [ ] Call the bank due: {due}\n")).unwrap();
    let tick = support::raven(dir, &["tick"]);
    assert!(text(&tick.stdout).contains("delivered to telegram:42"), "{}{}", text(&tick.stdout), text(&tick.stderr));
    let nudges: Vec<Seen> = fake
        .requests("/sendMessage")
        .into_iter()
        .filter(|s| s.body["text"].as_str().unwrap().contains("Call the bank"))
        .collect();
    assert_eq!(nudges.len(), 2, "one 429, then the message: {nudges:?}");
    assert_eq!(*bot.throttle.lock().unwrap(), 0);
    let keyboard = &nudges[1].body["reply_markup"]["inline_keyboard"][0];
    let data = |label: &str| -> String {
        let b = keyboard.as_array().unwrap().iter().find(|b| b["text"].as_str().unwrap().contains(label)).expect(label);
        b["callback_data"].as_str().unwrap().to_owned()
    };
    assert_eq!(nudges[1].body["parse_mode"], "MarkdownV2");

    // 👍, then "stop": each recorded and answered; the gate then holds the next nudge back.
    bot.push(tap(4, 42, &data("👍")));
    support::eventually("the 👍 answered", || fake.requests("/answerCallbackQuery").len() == 1);
    let feedback = || std::fs::read_to_string(dir.join("sentinel/feedback.jsonl")).unwrap_or_default();
    assert!(feedback().contains("\"accepted\""), "{}", feedback());
    bot.push(tap(5, 99, &data("stop")));
    bot.push(tap(6, 42, &data("stop")));
    support::eventually("the stop answered", || fake.requests("/answerCallbackQuery").len() == 2);
    assert!(feedback().contains("\"dismissed\""), "{}", feedback());
    let answers = fake.requests("/answerCallbackQuery");
    assert!(answers.iter().all(|a| a.body["callback_query_id"] != "cq5"), "a stranger's tap is not answered");
    let explain =
        support::raven(dir, &["policy", "explain", "--content", "Stretch your legs", "--session", "telegram:9"]);
    assert!(text(&explain.stdout).contains("verdict: deny at layer 7"), "{}", text(&explain.stdout));

    // The gateway killed: its supervisor starts another, which asks from the persisted offset.
    let polls_before = fake.requests("/getUpdates").len();
    sigkill(gateway_pid);
    support::eventually("a new gateway", || support::gateway(dir).1 != gateway_pid);
    bot.push(message(7, 42, "after the restart"));
    support::eventually("the reply after the restart", || sent_to(&fake, "42").len() >= 4);
    let first_poll =
        &fake.requests("/getUpdates")[polls_before..].iter().find(|p| p.body["offset"].as_i64() != Some(7)).cloned();
    assert!(first_poll.is_none(), "every poll after the restart asks from offset 7 on: {first_poll:?}");
    std::thread::sleep(std::time::Duration::from_millis(500));
    let replies: Vec<String> = sent_to(&fake, "42").into_iter().filter(|t| t.contains("No language model")).collect();
    assert_eq!(replies.len(), 3, "three messages, three replies, none twice: {replies:?}");
}

/// SIGKILL, as a crash.
fn sigkill(pid: u32) {
    assert!(std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status().unwrap().success());
}

/// A Telegram adapter that panics (the fault switch, on its first run) is started again and
/// answers; meanwhile the ntfy channel and the jsonl outlet keep delivering; `raven channels` counts the restart.
/// And delivery honesty: with no one watching the terminal, a nudge for `cli:local` goes to
/// the first channel, Telegram.
#[test]
fn a_panicking_adapter_is_restarted_the_others_deliver_and_an_unwatched_terminal_sends_to_telegram() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (bot, fake) = Bot::serve();
    let ntfy = FakeHttp::start(Arc::new(|_: &Seen| (200, json!({"id": "x"}).to_string())));
    let config = config(&fake, &format!("[delivery]\njsonl_path = \"out.jsonl\"\noutbox_backoff_s = 1\n[channels.ntfy]\nenabled = true\nserver = \"{}\"\ntopic = \"raven-test\"\n", ntfy.url));
    let env = [("RAVEN_TELEGRAM_TOKEN", TOKEN), ("RAVEN_FAULT", "channel:telegram:1"), ("RAVEN_CLI_ALWAYS", "0")];
    let _up = support::Killed(support::up(dir, &config, &env));
    support::wait_ready(dir);
    support::gateway(dir);

    // The other channel and the jsonl outlet deliver while Telegram's loop is down.
    let sent = |target: &str, words: &str| support::raven(dir, &["send", target, words]).status.success();
    support::eventually("the ntfy channel", || sent("ntfy:raven-test", "still delivering"));
    assert_eq!(ntfy.requests("/")[0].body["message"], "still delivering");
    assert!(sent("jsonl:me", "and here"));
    assert!(std::fs::read_to_string(dir.join("out.jsonl")).unwrap().contains("and here"));
    bot.push(message(1, 42, "are you back?"));
    support::eventually("the reply after the panic", || {
        sent_to(&fake, "42").iter().any(|t| t.contains("No language model"))
    });
    let channels = text(&support::raven(dir, &["channels"]).stdout);
    let line = channels.lines().find(|l| l.starts_with("telegram")).unwrap_or_else(|| panic!("{channels}"));
    assert!(line.contains("1 restarts") && line.contains("ok"), "{channels}");

    // No REPL, stdout not a terminal: the nudge for cli:local reaches Telegram instead.
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    let due = (support::now_local() + chrono::Duration::minutes(20)).format("%Y-%m-%d %H:%M");
    std::fs::write(dir.join("workspace/MEMORY.md"), format!("- [ ] Call the bank due: {due}\n")).unwrap();
    let tick = support::raven(dir, &["tick"]);
    assert!(
        text(&tick.stdout).contains("delivered to telegram:42"),
        "the result names where it went: {}",
        text(&tick.stdout)
    );
    support::eventually("the nudge on telegram", || sent_to(&fake, "42").iter().any(|t| t.contains("Call the bank")));
    let session = std::fs::read_to_string(dir.join("sessions/telegram_42.jsonl")).unwrap_or_default();
    assert!(session.contains("Call the bank"), "the nudge is in the Telegram conversation: {session}");
    let log = text(&support::raven(dir, &["log"]).stdout);
    let tick = log.lines().find(|l| l.contains(" tick ")).unwrap_or_else(|| panic!("{log}"));
    assert!(tick.contains("telegram:42") && !tick.contains("cli:local"), "the journal names where it went: {log}");
}

/// A discovery menu on Telegram has one button an option; a tap picks it as `/pick <menu> <n>`
/// would: the option runs (here, a reminder is scheduled) and the answer comes back.
#[test]
fn a_menu_shows_its_options_as_buttons_and_a_tap_picks_one() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (bot, fake) = Bot::serve();
    let config = config(
        &fake,
        "[sentinel]\ntrigger_poll_s = 1\n[discovery]\nenabled = true\nhour = 0\ndays = []\ntarget = \"telegram:42\"\n",
    );
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    let due = (support::now_local() + chrono::Duration::hours(3)).format("%Y-%m-%d %H:%M");
    std::fs::write(dir.join("workspace/MEMORY.md"), format!("- [ ] Renew the passport due: {due}\n")).unwrap();
    let _up = support::Killed(support::up(dir, &config, &[("RAVEN_TELEGRAM_TOKEN", TOKEN)]));
    support::wait_ready(dir);
    support::gateway(dir);
    // The gateway polls once it is connected: a message answered says so.
    bot.push(message(1, 42, "hello"));
    support::eventually("the first reply", || !sent_to(&fake, "42").is_empty());

    let said = support::raven(dir, &["discover", "--wait", "30"]);
    assert!(said.status.success(), "{}", text(&said.stderr));
    let menu = fake
        .requests("/sendMessage")
        .into_iter()
        .find(|s| s.body["text"].as_str().unwrap().contains("Renew the passport"))
        .unwrap_or_else(|| panic!("no menu: {}", text(&said.stdout)));
    let row = menu.body["reply_markup"]["inline_keyboard"][0].as_array().cloned().expect("buttons");
    assert_eq!(row[0]["text"], "1", "{row:?}");
    let pick = row[0]["callback_data"].as_str().unwrap().to_owned();
    assert!(pick.starts_with("p:") && pick.ends_with(":1"), "{pick}");

    let before = sent_to(&fake, "42").len();
    bot.push(tap(2, 42, &pick));
    support::eventually("the pick answered", || fake.requests("/answerCallbackQuery").len() == 1);
    assert_eq!(fake.requests("/answerCallbackQuery")[0].body["text"], "Picked 1.");
    support::eventually("the pick's reply", || sent_to(&fake, "42").len() > before);
    let jobs = std::fs::read_to_string(dir.join("cron/jobs.json")).unwrap_or_default();
    assert!(jobs.contains("Renew the passport"), "option 1 ran: a reminder is scheduled: {jobs}");
}

/// Telegram's limits are kept ahead of time, not only learned from a 429: in one chat a short
/// burst goes at once, then about one message a second.
#[test]
fn replies_in_one_chat_are_paced_after_a_short_burst() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (bot, fake) = Bot::serve();
    let _up = support::Killed(support::up(dir, &config(&fake, ""), &[("RAVEN_TELEGRAM_TOKEN", TOKEN)]));
    support::wait_ready(dir);
    for i in 1..=5 {
        bot.push(message(i, 42, &format!("question {i}")));
    }
    support::eventually("five answers", || sent_to(&fake, "42").len() == 5);
    let sent = fake.requests("/sendMessage");
    let after_first = |n: usize| sent[n].at - sent[0].at;
    // Three at once, then the fourth a second and the fifth two seconds after the first.
    assert!(after_first(3) >= std::time::Duration::from_millis(950), "{:?}", after_first(3));
    assert!(after_first(4) >= std::time::Duration::from_millis(1950), "{:?}", after_first(4));
}

/// A reminder broadcast to the terminal and to Telegram while no one watches the terminal:
/// its copy for the terminal goes to Telegram instead, where the other copy went, so the chat
/// gets it once (and both targets count as reached).
#[test]
fn a_broadcast_to_the_unwatched_terminal_and_telegram_reaches_the_chat_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (bot, fake) = Bot::serve();
    let env = [("RAVEN_TELEGRAM_TOKEN", TOKEN), ("RAVEN_CLI_ALWAYS", "0")];
    let _up = support::Killed(support::up(dir, &config(&fake, ""), &env));
    support::wait_ready(dir);
    support::gateway(dir);
    // The gateway polls once it is connected: a message answered says so.
    bot.push(message(1, 42, "hello"));
    support::eventually("the first reply", || !sent_to(&fake, "42").is_empty());

    let add =
        support::raven(dir, &["cron", "add", "--in", "1s", "--broadcast", "cli:local,telegram:42", "stretch now"]);
    assert!(add.status.success(), "{}", text(&add.stderr));
    let journal = || std::fs::read_to_string(dir.join("journal.jsonl")).unwrap_or_default();
    support::eventually("the fire", || journal().lines().any(|l| l.contains("\"kind\":\"cron\"")));
    let fire = journal().lines().find(|l| l.contains("\"kind\":\"cron\"")).unwrap().to_owned();
    assert!(fire.contains("telegram:42"), "{fire}");
    let copies = sent_to(&fake, "42").into_iter().filter(|t| t.contains("stretch now")).count();
    assert_eq!(copies, 1, "{:?}\n{fire}", sent_to(&fake, "42"));
    assert_eq!(text(&support::raven(dir, &["outbox", "--json"]).stdout).trim(), "[]", "nothing waits");
}
