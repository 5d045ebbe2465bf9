//! PendingDecisionStore (spec §12): the menus offered and not yet settled, in their own
//! fs2-locked JSON file with atomic replace. A menu lives until its TTL; a pick behind a
//! confirm step waits in `AwaitingConfirm`; a newer menu for the same session supersedes the
//! open one, whose picks are then refused.

use crate::store::{JsonStateStore, StoreError};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

const SECTION: &str = "pending_decisions";
/// Settled menus kept for answering late picks ("that menu was replaced").
const KEEP_SETTLED: usize = 20;

/// What picking an option does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ChoiceAction {
    /// Say this to the user (it rides the reply through the injector).
    Reply { text: String },
    /// Call one of the agent's tools with these arguments.
    Tool { name: String, args: Value },
    /// Hand this task to a subagent (ProactiveSpawn).
    Spawn { task: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    pub title: String,
    pub reason: String,
    pub action: ChoiceAction,
    /// Ask "yes?" before running it.
    #[serde(default)]
    pub confirm: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum PendingState {
    Open,
    /// Option `choice` (0-based) was picked and waits for a "yes".
    AwaitingConfirm {
        choice: usize,
    },
    Done {
        choice: usize,
    },
    Cancelled,
    Superseded {
        by: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingDecision {
    /// Short and shown in the menu (`m3`), so a pick can name its menu.
    pub id: String,
    /// `channel:chat_id` the menu went to.
    pub session: String,
    pub question: String,
    pub options: Vec<Choice>,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub state: PendingState,
}

impl PendingDecision {
    pub fn live(&self, now: DateTime<Utc>) -> bool {
        now < self.expires_at && matches!(self.state, PendingState::Open | PendingState::AwaitingConfirm { .. })
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Menus {
    next_id: u64,
    menus: Vec<PendingDecision>,
}

pub struct PendingDecisionStore(JsonStateStore);

impl PendingDecisionStore {
    /// The menus kept in `store` (the data dir's: `owners::Owner::Menus`).
    pub fn new(store: JsonStateStore) -> Self {
        PendingDecisionStore(store)
    }

    /// Stores a new menu for `session` under a fresh id (set on the returned copy),
    /// superseding the session's live one.
    pub fn offer(&self, mut menu: PendingDecision, now: DateTime<Utc>) -> Result<PendingDecision, StoreError> {
        self.0.update(SECTION, |m: &mut Menus| {
            m.next_id += 1;
            menu.id = format!("m{}", m.next_id);
            for old in m.menus.iter_mut().filter(|o| o.session == menu.session && o.live(now)) {
                old.state = PendingState::Superseded { by: menu.id.clone() };
            }
            m.menus.push(menu.clone());
            // Keep every live menu and the most recent settled ones.
            let settled = m.menus.iter().filter(|o| !o.live(now)).count();
            let mut drop = settled.saturating_sub(KEEP_SETTLED);
            m.menus.retain(|o| {
                if drop > 0 && !o.live(now) {
                    drop -= 1;
                    return false;
                }
                true
            });
            menu
        })
    }

    /// The session's live menu (open or awaiting a confirm), if any.
    pub fn live_for(&self, session: &str, now: DateTime<Utc>) -> Result<Option<PendingDecision>, StoreError> {
        let (m, _) = self.0.read::<Menus>(SECTION)?;
        Ok(m.menus.into_iter().rev().find(|d| d.session == session && d.live(now)))
    }

    pub fn get(&self, id: &str) -> Result<Option<PendingDecision>, StoreError> {
        let (m, _) = self.0.read::<Menus>(SECTION)?;
        Ok(m.menus.into_iter().find(|d| d.id == id))
    }

    /// Moves menu `id` from `from` to `to`; false when it was no longer in `from` (a
    /// concurrent pick, a supersede): the caller then runs nothing.
    pub fn transition(&self, id: &str, from: &PendingState, to: PendingState) -> Result<bool, StoreError> {
        self.0.update(SECTION, |m: &mut Menus| match m.menus.iter_mut().find(|d| d.id == id) {
            Some(d) if d.state == *from => {
                d.state = to;
                true
            }
            _ => false,
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use chrono::{Duration, TimeZone};

    pub(crate) fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 2, 9, 0, 0).unwrap()
    }

    pub(crate) fn menu(session: &str, n: usize) -> PendingDecision {
        PendingDecision {
            id: String::new(),
            session: session.into(),
            question: "Anything I can take off your plate?".into(),
            options: (1..=n)
                .map(|i| Choice {
                    title: format!("option {i}"),
                    reason: "why".into(),
                    action: ChoiceAction::Reply { text: format!("did {i}") },
                    confirm: false,
                })
                .collect(),
            created_at: t0(),
            expires_at: t0() + Duration::hours(4),
            state: PendingState::Open,
        }
    }

    #[test]
    fn a_newer_menu_supersedes_the_live_one_and_a_menu_expires() {
        let dir = tempfile::tempdir().unwrap();
        let s = PendingDecisionStore::new(JsonStateStore::new(dir.path().join("pending.json")));
        let first = s.offer(menu("cli:local", 3), t0()).unwrap();
        let other = s.offer(menu("webhook:ann", 2), t0()).unwrap();
        let second = s.offer(menu("cli:local", 2), t0()).unwrap();
        assert_eq!((first.id.as_str(), other.id.as_str(), second.id.as_str()), ("m1", "m2", "m3"));
        assert_eq!(s.get("m1").unwrap().unwrap().state, PendingState::Superseded { by: "m3".into() });
        assert_eq!(s.live_for("cli:local", t0()).unwrap().unwrap().id, "m3");
        assert_eq!(s.live_for("webhook:ann", t0()).unwrap().unwrap().id, "m2", "another session is untouched");
        assert!(s.live_for("cli:local", t0() + Duration::hours(4)).unwrap().is_none(), "expired at its TTL");
    }

    #[test]
    fn a_transition_happens_once() {
        let dir = tempfile::tempdir().unwrap();
        let s = PendingDecisionStore::new(JsonStateStore::new(dir.path().join("pending.json")));
        let m = s.offer(menu("cli:local", 3), t0()).unwrap();
        assert!(s.transition(&m.id, &PendingState::Open, PendingState::Done { choice: 1 }).unwrap());
        assert!(!s.transition(&m.id, &PendingState::Open, PendingState::Done { choice: 2 }).unwrap(), "picked already");
        assert!(s.live_for("cli:local", t0()).unwrap().is_none());
    }
}
