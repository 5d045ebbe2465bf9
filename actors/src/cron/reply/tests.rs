use super::*;
use crate::cron::store::{JobState, Schedule};
use chrono::{Duration, TimeZone};

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 2, 9, 0, 0).unwrap()
}

fn job(id: &str, target: &str, paused: Option<Paused>) -> Job {
    Job {
        id: id.into(),
        message: format!("reminder {id}"),
        schedule: Schedule::Every { every_s: 600, anchor: t0() },
        target: Some(target.into()),
        broadcast: Vec::new(),
        created_at: t0(),
        enabled: true,
        topic: None,
        state: JobState { strikes: 5, paused, ..JobState::default() },
        extra: Default::default(),
    }
}

#[test]
fn a_reply_resumes_a_strike_pause_from_the_next_slot_and_leaves_a_stop_alone() {
    let mut f = JobsFile {
        jobs: vec![
            job("decayed", "cli:local", Some(Paused::Strikes { fires: 5 })),
            job("stopped", "cli:local", Some(Paused::Stopped("paused by /stop".into()))),
            job("elsewhere", "webhook:me", Some(Paused::Strikes { fires: 5 })),
        ],
    };
    let now = t0() + Duration::hours(3) + Duration::minutes(4);
    user_replied(&mut f, "cli:local", now);
    let [decayed, stopped, elsewhere] = &f.jobs[..] else { unreachable!() };
    assert_eq!(decayed.state.paused, None);
    assert_eq!(decayed.state.strikes, 0);
    assert_eq!(decayed.state.next_run_at, Some(t0() + Duration::hours(3) + Duration::minutes(10)), "no catch-up");
    assert_eq!(stopped.state.paused, Some(Paused::Stopped("paused by /stop".into())), "a stop is the user's own");
    assert_eq!(stopped.state.strikes, 0);
    assert_eq!((elsewhere.state.paused.clone(), elsewhere.state.strikes), (Some(Paused::Strikes { fires: 5 }), 5));
}

#[test]
fn a_bare_channel_target_takes_a_reply_from_any_chat_there_and_a_disabled_job_stays_off() {
    let mut off = job("off", "telegram", Some(Paused::Strikes { fires: 5 }));
    off.enabled = false;
    let mut f = JobsFile { jobs: vec![job("bare", "telegram", Some(Paused::Strikes { fires: 5 })), off] };
    user_replied(&mut f, "telegram:42", t0());
    assert_eq!(f.jobs[0].state.paused, None);
    assert_eq!(f.jobs[1].state.paused, Some(Paused::Strikes { fires: 5 }));
}
