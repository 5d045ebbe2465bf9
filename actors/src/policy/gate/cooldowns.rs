//! The cooldown layers: after a nudge in the same session (6), after the user dismissed one
//! (7), and the dedup window (10) that holds back the same content, or a topic a cron job just
//! fired on.

use super::{Layer, NudgePolicy};
use crate::feedback::FeedbackSummary;
use crate::policy::topic::content_hash;
use chrono::{DateTime, Duration, Utc};

impl NudgePolicy {
    pub(super) fn session_cooldown(&self, session: Option<&str>, now: DateTime<Utc>) -> Layer {
        let key = session.unwrap_or("*");
        let cooldown = Duration::minutes(self.cfg.session_cooldown_minutes);
        match self.index.last_by_session.get(key) {
            Some(&last) if now < last + cooldown => {
                let who = if key == "*" { "the default targets were".to_owned() } else { format!("session {key} was") };
                Err(format!("{who} nudged at {}; cooldown {}m", self.shown(last), self.cfg.session_cooldown_minutes))
            }
            _ => Ok(()),
        }
    }

    pub(super) fn dismissal_cooldown(&self, fb: &FeedbackSummary, now: DateTime<Utc>) -> Layer {
        let cooldown = Duration::minutes(self.cfg.dismissal_cooldown_minutes);
        match fb.last_dismissal {
            Some(last) if now < last + cooldown => Err(format!(
                "the user dismissed a nudge at {}; cooldown {}m",
                self.shown(last),
                self.cfg.dismissal_cooldown_minutes
            )),
            _ => Ok(()),
        }
    }

    pub(super) fn dedup(&self, content: &str, topic: &str, now: DateTime<Utc>) -> Layer {
        let since = now - Duration::minutes(self.cfg.dedup_window_minutes);
        if let Some(&at) = self.index.last_by_content.get(&content_hash(content)) {
            if at > since {
                return Err(format!("the same content was sent at {}", self.shown(at)));
            }
        }
        match self.index.last_cron_by_topic.get(topic) {
            Some(&at) if at > since => Err(format!("a cron job fired on topic `{topic}` at {}", self.shown(at))),
            _ => Ok(()),
        }
    }
}
