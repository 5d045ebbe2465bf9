//! Job ids: six characters of base 32 (`k3xq9m`), short enough to type, and any unique prefix
//! of four or more characters names the job. A prefix that names several is refused with the
//! matches; an exact id always wins, so the long ids of older releases (`job-20261203…`) keep
//! working.
//!
//! An id is a hash of when the job was made, its message and an attempt number, so a manual
//! clock (a simulation) makes the same ids every run; a clash with an existing id is resolved
//! by the next attempt, under the jobs file's lock.

use super::store::Job;
use chrono::{DateTime, Utc};

/// The characters of an id: digits and lower-case letters without `i`, `l`, `o` and `u`.
const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";
const LENGTH: usize = 6;
/// The shortest prefix taken for an id.
pub const MIN_PREFIX: usize = 4;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("no job {0} (see `raven cron list`)")]
    NoSuchJob(String),
    #[error("`{0}` is too short to name a job: give at least {MIN_PREFIX} characters of its id")]
    TooShort(String),
    #[error("`{given}` names more than one job: {}; give more of the id", matches.join(", "))]
    Ambiguous { given: String, matches: Vec<String> },
}

/// The id of a job made at `now` with `message`; `attempt` counts clashes.
pub fn new_id(now: DateTime<Utc>, message: &str, attempt: u32) -> String {
    let seed = format!("{}|{message}|{attempt}", now.to_rfc3339_opts(chrono::SecondsFormat::Nanos, true));
    let mut hash = crate::store::fnv1a(seed.as_bytes());
    (0..LENGTH)
        .map(|_| {
            let c = ALPHABET[(hash % 32) as usize] as char;
            hash /= 32;
            c
        })
        .collect()
}

/// The job `given` names: its whole id, or a unique prefix of at least [`MIN_PREFIX`].
pub fn resolve<'a>(jobs: &'a [Job], given: &str) -> Result<&'a Job, IdError> {
    if let Some(job) = jobs.iter().find(|j| j.id == given) {
        return Ok(job);
    }
    if given.chars().count() < MIN_PREFIX {
        return Err(IdError::TooShort(given.to_owned()));
    }
    let matches: Vec<&Job> = jobs.iter().filter(|j| j.id.starts_with(given)).collect();
    match matches.as_slice() {
        [] => Err(IdError::NoSuchJob(given.to_owned())),
        [one] => Ok(one),
        many => {
            Err(IdError::Ambiguous { given: given.to_owned(), matches: many.iter().map(|j| j.id.clone()).collect() })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn job(id: &str) -> Job {
        serde_json::from_value(serde_json::json!({
            "id": id, "message": "m", "target": null, "created_at": "2026-12-01T08:00:00Z",
            "schedule": {"kind": "every", "every_s": 600, "anchor": "2026-12-01T08:00:00Z"}}))
        .unwrap()
    }

    #[test]
    fn ids_are_six_characters_of_the_alphabet_and_the_same_for_the_same_inputs() {
        let now = Utc.with_ymd_and_hms(2026, 12, 3, 9, 0, 0).unwrap();
        let id = new_id(now, "tea", 0);
        assert_eq!(id.len(), 6);
        assert!(id.bytes().all(|b| ALPHABET.contains(&b)), "{id}");
        assert_eq!(new_id(now, "tea", 0), id);
        assert_ne!(new_id(now, "tea", 1), id);
        assert_ne!(new_id(now, "coffee", 0), id);
    }

    #[test]
    fn a_unique_prefix_names_a_job_an_ambiguous_one_lists_the_matches() {
        let jobs = [job("k3xq9m"), job("k3xa2b"), job("job-20261203091500-42")];
        assert_eq!(resolve(&jobs, "k3xq").unwrap().id, "k3xq9m");
        assert_eq!(resolve(&jobs, "k3xq9m").unwrap().id, "k3xq9m");
        assert_eq!(resolve(&jobs, "job-20261203091500-42").unwrap().id, "job-20261203091500-42", "old ids work");
        assert_eq!(resolve(&jobs, "k3xa").unwrap().id, "k3xa2b");
        let err = resolve(&jobs, "k3x").unwrap_err();
        assert_eq!(err, IdError::TooShort("k3x".into()));
        let jobs = [job("k3xq9m"), job("k3xq2b")];
        let err = resolve(&jobs, "k3xq").unwrap_err();
        assert_eq!(err, IdError::Ambiguous { given: "k3xq".into(), matches: vec!["k3xq9m".into(), "k3xq2b".into()] });
        assert_eq!(resolve(&jobs, "zzzz").unwrap_err(), IdError::NoSuchJob("zzzz".into()));
    }
}
