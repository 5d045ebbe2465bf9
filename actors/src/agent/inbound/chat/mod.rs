//! The chat commands that never need a model, the same in every channel and the REPL:
//! `/start` and `/help`, `/remind <when> <text>`, `/list`, `/cancel <id>`, `/pause <id>`,
//! `/resume <id>`, `/why [words]`. They are answered here, before any model is asked, whether or not an LLM is
//! configured, so a model that is down, misconfigured or slow never breaks them. What they say
//! is written for a chat: plain words, no terminal hints, in the user's language: Chinese when
//! the command's own words are (`/remind 明天上午10点 交报告`), else `general.language` (under
//! `auto`, the language of MEMORY.md).

mod jobs;
mod remind;
mod why;

use crate::clock::SharedClock;
use crate::cron::tool::JobsCron;
use crate::sessions::{Answer, InboundHook};
use crate::time::Language;
use futures_util::future::LocalBoxFuture;
use raven_proto::TurnRequest;

/// The hook that answers the chat commands.
pub struct ChatCommands {
    pub jobs: JobsCron,
    pub clock: SharedClock,
    /// When a recurring job pauses for want of replies (`cron.strike_limit`,
    /// `cron.strike_min_gap_s`): a confirmation says so.
    pub strikes: Strikes,
    /// Whether a language model is configured (the help says what needs one).
    pub has_model: bool,
    /// The decision journal `/why` reads.
    pub journal: std::path::PathBuf,
    /// `general.language`, and the notes `auto` reads it from.
    pub language: crate::time::LanguageSetting,
    pub memory: std::path::PathBuf,
}

#[derive(Debug, Clone, Copy)]
pub struct Strikes {
    pub limit: u32,
    pub min_gap: chrono::Duration,
}

/// A command the hook answers.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Command<'a> {
    Help { first: bool },
    Remind(&'a str),
    List,
    Cancel(&'a str),
    Pause(&'a str),
    Resume(&'a str),
    Why(&'a str),
}

/// The command `text` is, if it is one of these (`None`: for the feedback commands or the agent).
fn parse(text: &str) -> Option<Command<'_>> {
    let text = text.trim();
    let (head, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    // `/list@raven_bot`: Telegram names the bot in a group.
    let head = head.split_once('@').map_or(head, |(h, _)| h);
    let rest = rest.trim();
    Some(match head.to_lowercase().as_str() {
        "/start" => Command::Help { first: true },
        "/help" => Command::Help { first: false },
        "/remind" => Command::Remind(rest),
        "/list" | "/reminders" => Command::List,
        "/cancel" => Command::Cancel(rest),
        "/pause" => Command::Pause(rest),
        "/resume" => Command::Resume(rest),
        "/why" => Command::Why(rest),
        _ => return None,
    })
}

impl ChatCommands {
    fn answer(&self, cmd: Command<'_>, session: &str, text: &str) -> Answer {
        let now = self.clock.now();
        let lang = self.lang(text);
        Answer::Done(match cmd {
            Command::Help { first } => self.help(first, lang),
            Command::Remind(rest) => return self.remind(rest, session, now, lang),
            Command::List => self.list(now, lang),
            Command::Cancel(id) => return self.cancel(id, lang),
            Command::Pause(id) => self.pause(id, lang),
            Command::Resume(id) => self.resume(id, now, lang),
            Command::Why(words) => self.why(words, now),
        })
    }

    /// The language to answer `text` in (see [`super::language`]).
    fn lang(&self, text: &str) -> Language {
        super::language::of_answer(text, self.language, &self.memory)
    }

    fn help(&self, first: bool, lang: Language) -> String {
        if lang == Language::Chinese {
            return self.help_zh(first);
        }
        let hello = match first {
            true => "Hello! I'm Raven. I remind you of what matters, ahead of time, and stay quiet otherwise.\n\n",
            false => "",
        };
        let model = match self.has_model {
            true => "Anything else you write goes to the language model.",
            false => "No language model is set up, so I answer these commands and your reminders; to talk about anything else, the owner of this Raven sets [llm] in its config.",
        };
        format!(
            "{hello}Reminders:\n\
             /remind <when> <text>: e.g. /remind tomorrow at 9 dentist, /remind every weekday at 8:30 standup\n\
             /list: your reminders, soonest first\n\
             /cancel <id>: remove one\n\
             /pause <id> and /resume <id>\n\n\
             On what I send you:\n\
             /ok: that was useful\n\
             /stop: not this topic for a while\n\
             /later: send it again later (in an hour unless set otherwise)\n\
             /earlier: that came too late; tell me of such things earlier\n\
             /snooze 2h: nothing proactive for a while (your reminders still come)\n\
             /why: what I decided lately and why (/why dentist: about one thing)\n\n\
             Times are read in {}. {model}",
            self.jobs.tz
        )
    }

    fn help_zh(&self, first: bool) -> String {
        let hello = if first {
            "你好！我是 Raven：重要的事提前提醒你，其余时候不打扰。\n\n"
        } else {
            ""
        };
        let model = match self.has_model {
            true => "其他消息会交给语言模型回答。",
            false => "没有配置语言模型，所以我只回答这些命令、发送你的提醒；要聊别的，请这台 Raven 的主人在配置里设置 [llm]。",
        };
        format!(
            "{hello}提醒：\n\
             /remind <时间> <内容>：例如 /remind 明天上午9点 看牙医，/remind 每个工作日 8:30 站会\n\
             /list：你的提醒，最近的在前\n\
             /cancel <编号>：删除一条\n\
             /pause <编号> 和 /resume <编号>：暂停、恢复\n\n\
             对我发的消息：\n\
             /ok：有用\n\
             /stop：这个话题先别提\n\
             /later：过一会儿再发（默认一小时后）\n\
             /earlier：太晚了，这类事以后早点告诉我\n\
             /snooze 2h：一段时间内不主动发消息（你的提醒照常）；说“让我静静”也行\n\
             /why：我最近做了什么决定、为什么\n\n\
             时间按 {} 理解。{model}",
            self.jobs.tz
        )
    }
}

impl InboundHook for ChatCommands {
    fn on_user_message<'a>(&'a self, req: &'a TurnRequest) -> LocalBoxFuture<'a, Option<crate::sessions::Answer>> {
        Box::pin(async move {
            let cmd = parse(&req.content)?;
            Some(self.answer(cmd, &format!("{}:{}", req.channel, req.chat_id), &req.content))
        })
    }
}

#[cfg(test)]
mod tests;
