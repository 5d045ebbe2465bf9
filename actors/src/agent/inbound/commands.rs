//! The LLM-free verdict commands: `/ok [topic]`, `/stop [topic]`, `/later`, `/snooze
//! <duration>|off`, `/earlier [n]` (that kind of item came too late) (`/ok [3fa2c1]`, `/stop [3fa2c1]`, `/later [3fa2c1]`: about that message, by
//! the short id shown beside it; `/later` sends it again after `feedback.later_minutes`),
//! typed in the REPL or sent as a short reply on any channel (and `raven feedback` on the
//! command line). Each answer says what was recorded and how to undo it; with nothing to
//! give feedback on, it says so and records nothing.

use crate::cron::later::{self, Verdicts};
use crate::cron::pause::PauseOutcome;
use crate::cron::store::JobsStore;
use crate::feedback::{short_id, FeedbackError, FeedbackRecord, Lifecycle, NudgeFeedbackTracker};
use crate::time::Language;
use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FeedbackCommand {
    Ok(Option<String>),
    Stop(Option<String>),
    Later(Option<String>),
    Snooze(Option<Duration>),
    /// The item came too late: its kind's heads-ups come earlier from now on.
    Earlier(Option<String>),
}

#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error("/snooze needs a duration (`/snooze 2h`, `/snooze 30m`) or `off`: {0}")]
    Snooze(String),
    #[error(transparent)]
    Feedback(#[from] FeedbackError),
    #[error(transparent)]
    Later(#[from] crate::feedback::give::GiveError),
    #[error("the jobs file: {0}")]
    Jobs(#[from] crate::cron::store::JobsError),
}

/// The command in a reply, if it is one (`None`: a message for the agent).
pub fn parse(text: &str) -> Option<Result<FeedbackCommand, CommandError>> {
    let text = text.trim();
    let (head, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    let topic = || (!rest.trim().is_empty()).then(|| rest.trim().to_lowercase());
    match head.to_lowercase().as_str() {
        "/ok" => Some(Ok(FeedbackCommand::Ok(topic()))),
        "/stop" => Some(Ok(FeedbackCommand::Stop(topic()))),
        "/later" => Some(Ok(FeedbackCommand::Later(topic()))),
        "/earlier" => Some(Ok(FeedbackCommand::Earlier(topic()))),
        "/snooze" => Some(match rest.trim() {
            "off" | "0" => Ok(FeedbackCommand::Snooze(None)),
            "" => Err(CommandError::Snooze("nothing given".into())),
            d => crate::time::parse_duration(d)
                .map(|d| FeedbackCommand::Snooze(Some(d)))
                .map_err(|e| CommandError::Snooze(e.to_string())),
        }),
        _ => None,
    }
}

/// Where a command is given: the conversation it is about, and the user's zone.
pub struct CommandCtx<'a> {
    pub tracker: &'a NudgeFeedbackTracker,
    pub jobs: Option<&'a JobsStore>,
    /// What `/later` schedules with; `None` where it is not offered.
    pub verdicts: Option<&'a Verdicts>,
    pub session: Option<&'a str>,
    pub tz: Tz,
    pub now: DateTime<Utc>,
    /// The language of a chat's answers (a terminal's are in English: they name commands).
    pub lang: Language,
}

const NOT_RATED: &str = "That was a reminder you scheduled: there is nothing to rate. Nothing recorded.";
const NOT_RATED_ZH: &str = "那是你自己设的提醒，没什么可评价的。没有记录。";

/// A kind in Chinese words: `付款`.
fn need_zh(need: crate::time::Need) -> &'static str {
    use crate::time::Need;
    match need {
        Need::Booking => "预订",
        Need::Occasion => "纪念日、生日",
        Need::Trip => "出行",
        Need::Payment => "付款",
        Need::Submission => "要交的",
        Need::Preparation => "要准备的",
    }
}

/// A command's argument: a message (`[3fa2c1]`, its short id as shown beside it, or as a
/// reply to it aims the command), else a topic (a number is resolved by
/// [`CommandCtx::split`]: an item of the latest morning brief).
fn split_arg(arg: Option<&str>) -> (Option<&str>, Option<&str>) {
    match arg.and_then(|a| a.strip_prefix('[')?.strip_suffix(']')) {
        Some(id) => (Some(id.trim()), None),
        None => (None, arg),
    }
}

const NOTHING: &str = "Nothing to give feedback on here: no proactive message in this conversation within the \
reaction window. Nothing recorded.";
const NOTHING_ZH: &str = "这里没有可以评价的消息：最近这个对话里没有我主动发的消息。没有记录。";

impl CommandCtx<'_> {
    /// [`split_arg`], with a number `n` read as item `n` of the latest morning brief here.
    fn split<'a>(&self, arg: Option<&'a str>) -> Result<(Option<String>, Option<&'a str>), FeedbackError> {
        let (message, topic) = split_arg(arg);
        match topic.and_then(|t| t.trim().parse::<usize>().ok()) {
            Some(n) => Ok((Some(self.brief_item(n)?), None)),
            None => Ok((message.map(str::to_owned), topic)),
        }
    }

    /// The id of item `n` of the latest morning brief in this conversation (the brief's id,
    /// then `.n`).
    fn brief_item(&self, n: usize) -> Result<String, FeedbackError> {
        let unknown = || FeedbackError::UnknownId(format!("{n} (no item {n} in the last morning brief here)"));
        let records = self.tracker.records()?;
        let brief = records.iter().rev().find(|r| {
            r.event == Lifecycle::Dispatched
                && r.topic.as_deref() == Some(crate::context::brief::TOPIC)
                && r.session.is_some()
                && r.session.as_deref() == self.session
        });
        let id = format!("{}.{n}", brief.ok_or_else(unknown)?.nudge_id);
        match records.iter().any(|r| r.nudge_id == id) {
            true => Ok(id),
            false => Err(unknown()),
        }
    }

    fn undecided(&self, topic: Option<&str>) -> Result<Option<FeedbackRecord>, FeedbackError> {
        let Some(session) = self.session else { return Ok(None) };
        let latest = self.tracker.latest_undecided(session, self.now)?;
        Ok(latest.filter(|r| topic.is_none_or(|t| r.topic.as_deref() == Some(t))))
    }

    /// The message a command is about: the one its argument names (`[3fa2c1]`), else the
    /// latest of the conversation that waits for a verdict (on `topic`, when given).
    fn aimed(&self, message: Option<&str>, topic: Option<&str>) -> Result<Option<FeedbackRecord>, FeedbackError> {
        match message {
            Some(id) => self.tracker.dispatched_message(id).map(Some),
            None => self.undecided(topic),
        }
    }

    fn shown(&self, t: DateTime<Utc>) -> String {
        crate::time::local(t, self.tz)
    }

    /// Whether the answer is read in a terminal (`raven feedback`, `raven say`, the REPL) rather
    /// than a chat: only there do command lines and backticks belong.
    fn in_terminal(&self) -> bool {
        self.session.is_none_or(|s| s.starts_with("cli:"))
    }

    /// A topic as the answer names it: `water` in a terminal, “water” in a chat, 「水」 in Chinese.
    fn topic(&self, t: &str) -> String {
        match (self.in_terminal(), self.zh()) {
            (true, _) => format!("`{t}`"),
            (false, true) => format!("「{t}」"),
            (false, false) => format!("“{t}”"),
        }
    }

    /// Whether the answer is in Chinese: a chat's, in a Chinese-speaking user's.
    fn zh(&self) -> bool {
        self.lang == Language::Chinese && !self.in_terminal()
    }

    /// `english`, or `chinese` where the answer is in Chinese.
    fn pick<'s>(&self, english: &'s str, chinese: &'s str) -> &'s str {
        if self.zh() {
            chinese
        } else {
            english
        }
    }

    /// Runs the command and returns what to tell the user.
    pub fn apply(&self, cmd: &FeedbackCommand) -> Result<String, CommandError> {
        match cmd {
            FeedbackCommand::Ok(topic) => self.ok(topic.as_deref()),
            FeedbackCommand::Stop(topic) => self.stop(topic.as_deref()),
            FeedbackCommand::Later(topic) => self.later(topic.as_deref()),
            FeedbackCommand::Snooze(d) => self.snooze(*d),
            FeedbackCommand::Earlier(arg) => self.earlier(arg.as_deref()),
        }
    }

    fn ok(&self, arg: Option<&str>) -> Result<String, CommandError> {
        let (message, topic) = self.split(arg)?;
        let message = message.as_deref();
        let mut said = Vec::new();
        if let Some(t) = topic.filter(|t| self.tracker.summary(self.now).is_ok_and(|s| s.muted.contains_key(*t))) {
            self.tracker.record_mute(t, None, self.now)?;
            said.push(match self.zh() {
                true => format!("话题{}不再静音。想再静音：/stop {t}", self.topic(t)),
                false => format!("Unmuted topic {}. To mute it again: /stop {t}", self.topic(t)),
            });
        }
        match self.aimed(message, topic)? {
            Some(r) if r.source.is_rated() => {
                self.tracker.record_verdict(&r.nudge_id, "accepted", "/ok", self.now)?;
                let id = short_id(&r.nudge_id);
                let topic = self.topic(&r.topic.unwrap_or_default());
                said.push(match (self.in_terminal(), self.zh()) {
                    (true, _) => {
                        format!("Recorded: accepted [{id}] (topic {topic}). To undo: raven feedback {id} neutral")
                    }
                    (false, true) => format!("已记录：有用 [{id}]（话题{topic}）。谢谢！"),
                    (false, false) => format!("Recorded: accepted [{id}] (topic {topic}). Thanks!"),
                });
            }
            _ if said.is_empty() && topic.is_some() => {
                let t = self.topic(topic.unwrap_or_default());
                return Ok(match self.zh() {
                    true => format!("话题{t}没有静音，这里也没有等你评价的消息。没有记录。"),
                    false => {
                        format!("Topic {t} is not muted and nothing here waits for a verdict on it. Nothing recorded.")
                    }
                });
            }
            Some(_) if said.is_empty() => return Ok(self.pick(NOT_RATED, NOT_RATED_ZH).into()),
            _ if said.is_empty() => return Ok(self.pick(NOTHING, NOTHING_ZH).into()),
            _ => {}
        }
        Ok(said.join("\n"))
    }

    fn stop(&self, arg: Option<&str>) -> Result<String, CommandError> {
        let (message, topic) = self.split(arg)?;
        let target = self.aimed(message.as_deref(), topic)?;
        if let Some(r) = target.as_ref().filter(|r| !r.source.is_rated()) {
            return self.stop_job(r);
        }
        let Some(topic) = topic.map(str::to_owned).or_else(|| target.as_ref().and_then(|r| r.topic.clone())) else {
            return Ok(self.pick(NOTHING, NOTHING_ZH).into());
        };
        let mut said = Vec::new();
        if let Some(r) = &target {
            self.tracker.record_verdict(&r.nudge_id, "dismissed", "stop", self.now)?;
            let id = short_id(&r.nudge_id);
            said.push(if self.zh() {
                format!("已记录：不要了 [{id}]。")
            } else {
                format!("Recorded: dismissed [{id}] as a stop.")
            });
        }
        let until = self.now + Duration::days(self.tracker.config().stop_mute_days);
        self.tracker.record_mute(&topic, Some(until), self.now)?;
        let (t, shown, tz) = (self.topic(&topic), self.shown(until), self.tz);
        said.push(match self.zh() {
            true => format!("话题{t}静音到 {shown}（{tz}）。撤销：/ok {topic}"),
            false => format!("Muted topic {t} until {shown} ({tz}). To undo: /ok {topic}"),
        });
        Ok(said.join(" "))
    }

    /// A "stop" to a cron reminder: the job is paused (the reminder is the user's own).
    fn stop_job(&self, r: &FeedbackRecord) -> Result<String, CommandError> {
        let (Some(job), Some(jobs)) = (r.job.as_deref(), self.jobs) else {
            return Ok(match (self.in_terminal(), self.zh()) {
                (true, _) => {
                    "That was a reminder you scheduled; remove it with `raven cron rm <id>`. Nothing recorded."
                }
                (false, true) => "那是你自己设的提醒；/list 能看到它，/cancel <编号> 删除。没有记录。",
                (false, false) => {
                    "That was a reminder you scheduled; /list shows it and /cancel <id> removes it. Nothing recorded."
                }
            }
            .into());
        };
        self.tracker
            .append(&FeedbackRecord { reason: Some("/stop".into()), ..r.following(Lifecycle::Neutral, self.now) })?;
        Ok(match jobs.pause(job, "paused by /stop")? {
            PauseOutcome::Done | PauseOutcome::Already => match (self.in_terminal(), self.zh()) {
                (true, _) => format!("Paused the reminder job `{job}`. To resume it: raven cron resume {job}"),
                (false, true) => format!("已暂停提醒 {job}。恢复：/resume {job}"),
                (false, false) => format!("Paused the reminder job {job}. To resume it: /resume {job}"),
            },
            PauseOutcome::NoSuchJob if self.zh() => {
                format!("那是你的提醒（{job}），已经结束或删除，不会再来。没什么可停的。")
            }
            PauseOutcome::NoSuchJob => {
                format!("That was your reminder (job {job}); it is done or removed and will not come again. Nothing to stop.")
            }
        })
    }

    /// `/later`: the latest message (a nudge or a cron reminder), or the one named, is sent
    /// again after the wait, as a job the user can cancel.
    fn later(&self, arg: Option<&str>) -> Result<String, CommandError> {
        let Some(verdicts) = self.verdicts else {
            return Ok("Later is given in a chat or the REPL; here: raven feedback <id> later".into());
        };
        let (message, topic) = self.split(arg)?;
        // A nudge or a cron reminder alike: either can come again later.
        let Some(r) = self.aimed(message.as_deref(), topic)? else { return Ok(self.pick(NOTHING, NOTHING_ZH).into()) };
        let req = crate::feedback::give::GiveFeedback {
            nudge_id: Some(r.nudge_id),
            verdict: later::LATER.into(),
            ..Default::default()
        };
        let given = verdicts.give(self.tracker, &req, self.now)?;
        Ok(later::said_in(&given, self.tz, self.now, if self.zh() { Language::Chinese } else { Language::English }))
    }

    /// `/earlier [n]`: item `n` of the latest brief here (or the one named, or the latest
    /// message here told ahead by its kind) came too late: that kind's heads-ups come twice as
    /// far ahead from now on (`Ladder::lengthened`). A neutral verdict: it rates nothing.
    fn earlier(&self, arg: Option<&str>) -> Result<String, CommandError> {
        let (message, _) = self.split(arg)?;
        let target = match message {
            Some(id) => Some(self.tracker.dispatched_message(&id)?),
            None => self.latest_with_kind()?,
        };
        let Some(r) = target else { return Ok(self.pick(NOTHING, NOTHING_ZH).into()) };
        let Some(need) = r.kind.as_deref().and_then(crate::time::Need::named) else {
            return Ok(self
                .pick(
                    "That was not a heads-up told ahead by its kind (a payment, a booking…): nothing to move. Nothing recorded.",
                    "那条不是按类别提前的提醒（付款、预订……）：没什么可调。没有记录。",
                )
                .into());
        };
        self.tracker.record_verdict(&r.nudge_id, "neutral", crate::feedback::EARLIER, self.now)?;
        Ok(match self.zh() {
            true => format!("好的：以后{}类的事会更早告诉你（每说一次，提前的天数加倍，最多四周）。", need_zh(need)),
            false => format!(
                "Noted: I'll tell you of {} earlier from now on (twice as far ahead each time you say so, at most four weeks).",
                need.words()
            ),
        })
    }

    /// Whether a message told ahead by its kind came here within the reaction window.
    pub fn told_ahead_here(&self) -> bool {
        self.latest_with_kind().is_ok_and(|r| r.is_some())
    }

    /// The latest message here within the reaction window told ahead by its kind.
    fn latest_with_kind(&self) -> Result<Option<FeedbackRecord>, FeedbackError> {
        let Some(session) = self.session else { return Ok(None) };
        let window = Duration::hours(self.tracker.config().reaction_window_h);
        let records = self.tracker.records()?;
        Ok(records.into_iter().rev().find(|r| {
            r.event == Lifecycle::Dispatched
                && r.session.as_deref() == Some(session)
                && r.kind.is_some()
                && self.now - r.at <= window
        }))
    }

    fn snooze(&self, d: Option<Duration>) -> Result<String, CommandError> {
        let Some(d) = d else {
            self.tracker.record_snooze(self.now, self.now)?;
            return Ok(self
                .pick("Snooze ended: proactive messages may come again.", "免打扰结束了：主动消息可以再来了。")
                .into());
        };
        let until = self.now + d;
        self.tracker.record_snooze(until, self.now)?;
        let (shown, tz) = (self.shown(until), self.tz);
        Ok(match self.zh() {
            true => format!("好的：{shown}（{tz}）之前不主动发消息；你设的提醒照常。提前结束：/snooze off"),
            false => format!(
                "Snoozed: no proactive message until {shown} ({tz}); your cron reminders still come. To end it: /snooze off"
            ),
        })
    }
}

#[cfg(test)]
mod tests;
