//! Ids as the report shows them: without this process's id, which differs per run, so the
//! same scenario renders the same bytes.

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
