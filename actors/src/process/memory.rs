//! What a long-running process gives back once it is idle ([`give_back`]).
//!
//! Start-up runs code an idle supervisor never runs again: the argument parser, the config
//! reader, the database's migrations, the HTTP and TLS set-up. The kernel maps each page of the
//! binary that code touched, and 64 KiB around it, into the process, and keeps those pages
//! there: they count in its resident set and, being mapped executable pages, the kernel is slow
//! to reclaim them when memory runs short. [`give_back`] unmaps the clean pages of the process's
//! read-only file mappings (its code and constants, and those of libc), which stay in the page
//! cache and come back at their next use as a minor fault, and returns the allocator's free
//! memory to the system. The pages a process wrote (relocations, its heap) are never touched.

use std::io;
use std::time::Duration;

/// What one [`give_back`] released.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Given {
    /// Resident bytes of the read-only file mappings unmapped.
    pub mapped: u64,
    /// Whether the allocator returned memory to the system.
    pub heap: bool,
}

/// When a process that just started gives back, in seconds after it is ready: at once, then as
/// its start-up settles (the gateway child starting and connecting, the first clients, a first
/// retry pass over what waited for an outlet that is back).
const SETTLING: [u64; 4] = [0, 2, 10, 30];

/// How often a process gives back again what its last burst of work took (a retry pass over
/// thousands of waiting messages, say): a burst's memory outlasts it by a minute at most. Each
/// time costs a read of `/proc/self/smaps` and the minor faults that map the working set again:
/// about a millisecond.
pub const EVERY: Duration = Duration::from_secs(60);

/// Gives back as start-up settles ([`SETTLING`]), then every `period`, for as long as the
/// process runs. What runs meanwhile (a tick, a delivery) maps its pages again as it needs them.
pub async fn give_back_while_idle(period: Duration) {
    let mut waited = 0;
    for at in SETTLING {
        actix_rt::time::sleep(Duration::from_secs(at - waited)).await;
        waited = at;
        give_back_and_say();
    }
    loop {
        actix_rt::time::sleep(period).await;
        give_back_and_say();
    }
}

fn give_back_and_say() {
    match give_back() {
        Ok(given) => tracing::debug!(mapped_kib = given.mapped / 1024, heap = given.heap, "gave back idle memory"),
        Err(e) => tracing::debug!("cannot read this process's mappings: {e}"),
    }
}

/// A read-only mapping of a file that holds no page of the process's own.
#[derive(Debug, PartialEq, Eq)]
struct Clean {
    start: usize,
    len: usize,
    resident: u64,
}

/// Unmaps the clean pages of the process's read-only file mappings, and trims the heap.
pub fn give_back() -> io::Result<Given> {
    let smaps = std::fs::read_to_string("/proc/self/smaps")?;
    let mut given = Given::default();
    for m in clean_mappings(&smaps) {
        if unmap(&m).is_ok() {
            given.mapped += m.resident;
        }
    }
    given.heap = trim_heap();
    Ok(given)
}

/// The mappings of `/proc/self/smaps` that are safe to drop: backed by a file, not writable,
/// and holding no anonymous page (one the process wrote: a copy made on write) nor any in swap.
fn clean_mappings(smaps: &str) -> Vec<Clean> {
    let mut out = Vec::new();
    let mut current: Option<(Clean, bool)> = None; // the mapping, and whether it qualifies
    let mut flush = |c: Option<(Clean, bool)>| {
        if let Some((m, true)) = c {
            if m.resident > 0 {
                out.push(m);
            }
        }
    };
    for line in smaps.lines() {
        if let Some(head) = mapping_head(line) {
            flush(current.take());
            current = Some(head);
            continue;
        }
        let Some((m, ok)) = current.as_mut() else { continue };
        let (key, kib) = match field(line) {
            Some(f) => f,
            None => continue,
        };
        match key {
            "Rss" => m.resident = kib * 1024,
            "Anonymous" | "Swap" if kib > 0 => *ok = false,
            _ => {}
        }
    }
    flush(current);
    out
}

/// `start-end perms offset dev inode path`: the mapping, and whether its head qualifies.
fn mapping_head(line: &str) -> Option<(Clean, bool)> {
    let mut parts = line.split_whitespace();
    let (range, perms) = (parts.next()?, parts.next()?);
    let (start, end) = range.split_once('-')?;
    let (start, end) = (usize::from_str_radix(start, 16).ok()?, usize::from_str_radix(end, 16).ok()?);
    let (_offset, _dev, inode) = (parts.next()?, parts.next()?, parts.next()?);
    let path = parts.next().unwrap_or("");
    let file_backed = inode != "0" && path.starts_with('/');
    let read_only = perms.len() == 4 && perms.starts_with('r') && &perms[1..2] == "-" && perms.ends_with('p');
    let clean = Clean { start, len: end.checked_sub(start)?, resident: 0 };
    Some((clean, file_backed && read_only))
}

/// `Key:   12 kB`.
fn field(line: &str) -> Option<(&str, u64)> {
    let (key, rest) = line.split_once(':')?;
    let kib = rest.trim().strip_suffix("kB")?.trim().parse().ok()?;
    Some((key, kib))
}

#[cfg(target_os = "linux")]
fn unmap(m: &Clean) -> rustix::io::Result<()> {
    use rustix::mm::{madvise, Advice};
    // SAFETY: the range is a whole private mapping of a file that is not writable and holds no
    // page of its own (no anonymous, dirty or swapped page): every page in it is the file's
    // content. Dropping them changes no value the process can read; the next access maps the
    // same bytes again from the page cache.
    unsafe { madvise(m.start as *mut std::ffi::c_void, m.len, Advice::LinuxDontNeed) }
}

#[cfg(not(target_os = "linux"))]
fn unmap(_: &Clean) -> rustix::io::Result<()> {
    Err(rustix::io::Errno::NOSYS)
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim_heap() -> bool {
    // SAFETY: `malloc_trim` takes no pointer and may be called from any thread at any time.
    unsafe { libc::malloc_trim(0) == 1 }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim_heap() -> bool {
    false
}

#[cfg(test)]
mod tests;
