//! Ids as the report shows them: without this process's id, which differs per run, and a
//! Sentinel nudge numbered by its order in the report (the engine's count is shared by every
//! runner of the process), so the same scenario renders the same bytes.

use std::collections::HashMap;

/// Sentinel nudge ids (`n-<time>-<pid>-<seq>`) as `n-<time>-<k>`, `k` counting the distinct ids
/// of the report from 1 in the order they first appear; any other id is only freed of the pid.
#[derive(Default)]
pub struct Renumber(HashMap<String, usize>);

impl Renumber {
    pub fn id(&mut self, id: &str) -> String {
        let stable = stable_nudge_id(id);
        let Some((head, seq)) = stable.rsplit_once('-') else { return stable };
        if !stable.starts_with("n-") || seq.is_empty() || !seq.bytes().all(|b| b.is_ascii_digit()) {
            return stable;
        }
        let next = self.0.len() + 1;
        let k = *self.0.entry(stable.clone()).or_insert(next);
        format!("{head}-{k}")
    }
}

/// An id (`n-<time>-<pid>-<seq>`, `heartbeat-<pid>-<ms>-<seq>`) without this process's id,
/// which differs per run.
pub fn stable_nudge_id(id: &str) -> String {
    let pid = format!("-{}-", std::process::id());
    id.replacen(&pid, "-", 1)
}

/// A job the agent made (`job-<time>-<pid>`) without the process id, which differs per run.
pub fn stable_job_id(id: &str) -> String {
    match id.rsplit_once('-') {
        Some((head, pid)) if head.starts_with("job-") && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) => {
            head.to_owned()
        }
        _ => id.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nudge_ids_are_numbered_by_their_first_appearance() {
        let pid = std::process::id();
        let mut r = Renumber::default();
        let a = format!("n-20260302T090000-{pid}-17");
        let b = format!("n-20260302T100000-{pid}-40");
        assert_eq!(r.id(&a), "n-20260302T090000-1");
        assert_eq!(r.id(&b), "n-20260302T100000-2");
        assert_eq!(r.id(&a), "n-20260302T090000-1");
        assert_eq!(r.id(&format!("heartbeat-{pid}-5-3")), "heartbeat-5-3");
    }
}
