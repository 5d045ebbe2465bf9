use super::*;
use crate::cron::reply::user_replied;
use crate::cron::store::{JobState, Schedule};
use chrono::TimeZone;

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 2, 9, 0, 0).unwrap()
}

fn claimer(pid: u32) -> Claimer {
    Claimer {
        pid,
        ttl: Duration::seconds(300),
        filter: ChannelFilter::default(),
        strike_limit: 3,
        strike_min_gap: Duration::days(1),
    }
}

fn job(id: &str, schedule: Schedule, target: Option<&str>) -> Job {
    Job {
        id: id.into(),
        message: format!("reminder {id}"),
        schedule,
        target: target.map(Into::into),
        broadcast: Vec::new(),
        created_at: t0(),
        enabled: true,
        topic: None,
        state: JobState::default(),
        extra: Default::default(),
    }
}

fn every(id: &str, secs: u64) -> Job {
    job(id, Schedule::Every { every_s: secs, anchor: t0() }, Some("cli:local"))
}

fn file(jobs: Vec<Job>) -> JobsFile {
    JobsFile { jobs }
}

#[test]
fn a_due_job_is_claimed_by_one_process_only_until_the_claim_goes_stale() {
    let mut f = file(vec![every("a", 60)]);
    let now = t0() + Duration::seconds(60);
    assert_eq!(claimer(1).claim_due(&mut f.edit(), now - Duration::seconds(1)).len(), 0, "not due yet");
    let got = claimer(1).claim_due(&mut f.edit(), now);
    assert_eq!(got.len(), 1);
    assert_eq!(f.jobs[0].state.claim.map(|c| c.pid), Some(1));
    assert!(claimer(2).claim_due(&mut f.edit(), now).is_empty(), "claimed by 1");
    assert!(claimer(2).claim_due(&mut f.edit(), now + Duration::seconds(299)).is_empty(), "within the TTL");
    assert_eq!(claimer(2).next_wake(&f, now), Some(now + Duration::seconds(300)), "2 wakes when it goes stale");
    let stolen = claimer(2).claim_due(&mut f.edit(), now + Duration::seconds(300));
    assert_eq!(stolen.len(), 1, "a stale claim is anyone's");
    assert_eq!(f.jobs[0].state.claim.map(|c| c.pid), Some(2));
}

#[test]
fn completing_moves_to_the_next_slot_after_now_and_a_lost_claim_writes_nothing() {
    let mut f = file(vec![every("a", 60)]);
    let c1 = claimer(1);
    // Due at 09:01, but nothing ran until 09:30: one catch-up fire, not thirty.
    let late = t0() + Duration::minutes(30) + Duration::seconds(5);
    let got = c1.claim_due(&mut f.edit(), late);
    assert_eq!(got.len(), 1);
    let claim = got[0].state.claim.unwrap();
    assert_eq!(claim.slot, t0() + Duration::seconds(60), "the oldest missed slot");
    assert_eq!(c1.complete(&mut f.edit(), "a", &claim, Reached::Someone, late), Completion::Done { paused: None });
    assert_eq!(f.jobs[0].state.next_run_at, Some(t0() + Duration::minutes(31)));
    assert_eq!((f.jobs[0].state.runs, f.jobs[0].state.claim), (1, None));
    assert!(c1.claim_due(&mut f.edit(), late).is_empty(), "fired once");
    // A claim somebody took over is not ours to complete.
    let mut g = file(vec![every("b", 60)]);
    let mine = c1.claim_due(&mut g.edit(), late)[0].state.claim.unwrap();
    claimer(2).claim_due(&mut g.edit(), late + Duration::seconds(300));
    let before = g.clone();
    assert_eq!(
        c1.complete(&mut g.edit(), "b", &mine, Reached::Someone, late + Duration::seconds(301)),
        Completion::Lost
    );
    assert_eq!(g, before);
}

#[test]
fn a_one_shot_fires_once_and_is_done_even_when_its_time_passed_while_down() {
    let at = job("once", Schedule::At { at: t0() + Duration::seconds(10) }, Some("cli:local"));
    let mut f = file(vec![at]);
    let now = t0() + Duration::hours(5);
    let got = claimer(1).claim_due(&mut f.edit(), now);
    assert_eq!(got.len(), 1, "catch-up on start");
    let mut edit = f.edit();
    claimer(1).complete(&mut edit, "once", &got[0].state.claim.unwrap(), Reached::Someone, now);
    assert!(claimer(1).claim_due(&mut edit, now + Duration::days(1)).is_empty(), "never again");
    let state = &f.jobs[0].state;
    assert_eq!((state.done_at, state.runs, state.claim), (Some(now), 1, None));
    assert_eq!(claimer(1).next_wake(&f, now), None, "nothing left to wake for");
}

#[test]
fn strikes_pause_a_job_at_the_limit_and_a_user_reply_resets_them() {
    let c = claimer(1);
    let mut f = file(vec![every("chatty", 60)]);
    let mut now = t0();
    let fire = |f: &mut JobsFile, now: &mut DateTime<Utc>| {
        *now += Duration::seconds(60);
        let got = c.claim_due(&mut f.edit(), *now);
        got.first().map(|j| c.complete(&mut f.edit(), &j.id, &j.state.claim.unwrap(), Reached::Someone, *now))
    };
    fire(&mut f, &mut now);
    fire(&mut f, &mut now);
    assert_eq!(f.jobs[0].state.strikes, 2);
    user_replied(&mut f, "cli:local", now);
    assert_eq!(f.jobs[0].state.strikes, 0, "a reply resets");
    fire(&mut f, &mut now);
    fire(&mut f, &mut now);
    let third = fire(&mut f, &mut now);
    assert_eq!(third, Some(Completion::Done { paused: Some(Paused::Strikes { fires: 3 }) }));
    assert!(fire(&mut f, &mut now).is_none(), "a paused job does not fire");
    assert_eq!(c.next_wake(&f, now), None);
    // A reply elsewhere does not count; a silent job never strikes.
    let mut g = file(vec![every("x", 60), job("quiet", Schedule::Every { every_s: 60, anchor: t0() }, None)]);
    fire(&mut g, &mut now);
    user_replied(&mut g, "webhook:someone", now);
    assert_eq!(g.jobs[0].state.strikes, 1);
    assert_eq!(g.jobs[1].state.strikes, 0);
}

#[test]
fn the_channel_filter_keeps_a_repl_off_jobs_for_real_channels() {
    let repl = Claimer { filter: ChannelFilter::only(&["cli"]), ..claimer(1) };
    let mut f = file(vec![
        every("for-cli", 60),
        job("for-webhook", Schedule::Every { every_s: 60, anchor: t0() }, Some("webhook:me")),
        job("silent", Schedule::Every { every_s: 60, anchor: t0() }, None),
    ]);
    let now = t0() + Duration::seconds(60);
    let ids: Vec<_> = repl.claim_due(&mut f.edit(), now).into_iter().map(|j| j.id).collect();
    assert_eq!(ids, ["for-cli"]);
    let ids: Vec<_> = claimer(2).claim_due(&mut f.edit(), now).into_iter().map(|j| j.id).collect();
    assert_eq!(ids, ["for-webhook", "silent"], "the supervisor takes the rest");
}

#[test]
fn next_wake_is_the_earliest_due_job_and_an_unusable_schedule_pauses_with_its_reason() {
    let mut f = file(vec![
        every("slow", 3600),
        every("fast", 120),
        job("bad", Schedule::Cron { expr: "61 * * * *".into(), tz: "UTC".into() }, Some("cli:local")),
    ]);
    assert_eq!(claimer(1).next_wake(&f, t0()), Some(t0()), "unarmed jobs: look now");
    assert!(claimer(1).claim_due(&mut f.edit(), t0()).is_empty());
    assert_eq!(claimer(1).next_wake(&f, t0()), Some(t0() + Duration::seconds(120)));
    assert!(
        matches!(&f.jobs[2].state.paused, Some(Paused::Unschedulable(why)) if why.starts_with("unusable schedule"))
    );
}

#[test]
fn a_fire_that_reached_nobody_is_no_strike() {
    let c = claimer(1);
    let mut f = file(vec![every("water", 60)]);
    let mut now = t0();
    for _ in 0..10 {
        now += Duration::seconds(60);
        let got = c.claim_due(&mut f.edit(), now);
        let claim = got[0].state.claim.unwrap();
        assert_eq!(c.complete(&mut f.edit(), "water", &claim, Reached::Nobody, now), Completion::Done { paused: None });
    }
    let s = &f.jobs[0].state;
    assert_eq!((s.runs, s.strikes, s.paused.is_none()), (10, 0, true), "a channel outage pauses nothing");
}

#[test]
fn jobs_with_impossible_intervals_are_set_aside_and_a_good_one_keeps_firing() {
    // As a hand edit leaves them: armed already, next_run_at due.
    let armed = |mut j: Job| {
        j.state.next_run_at = Some(t0() + Duration::seconds(1));
        j
    };
    let mut f =
        file(vec![armed(every("huge", 100_000_000_000_000_000)), armed(every("wraps", u64::MAX)), every("good", 1)]);
    let c = Claimer { strike_limit: 100, ..claimer(1) };
    for s in 1..=3 {
        let now = t0() + Duration::seconds(s);
        let fired = c.claim_due(&mut f.edit(), now);
        let ids: Vec<_> = fired.iter().map(|j| j.id.as_str()).collect();
        assert_eq!(ids, ["good"], "second {s}");
        let claim = f.jobs[2].state.claim.unwrap();
        assert!(matches!(
            c.complete(&mut f.edit(), "good", &claim, Reached::Someone, now),
            Completion::Done { paused: None }
        ));
    }
    for bad in &f.jobs[..2] {
        let why = bad.state.paused.as_ref().map(Paused::to_string).unwrap_or_default();
        assert!(why.contains("over 100 years"), "{}: {why}", bad.id);
    }
    assert_eq!(f.jobs[2].state.runs, 3, "the good job fired every second");
}
