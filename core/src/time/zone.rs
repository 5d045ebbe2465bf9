//! The user's zone, resolved once: `general.timezone` in config.toml, else the `TZ` variable (an
//! IANA name, `:Name` or `:/path/to/zoneinfo/Name`), else the system's `/etc/localtime`, else UTC
//! with a warning naming what could not be read. An invalid `TZ` is the user's explicit word gone
//! wrong: it falls back to UTC with a warning rather than to a zone they did not ask for.

use chrono_tz::Tz;
use std::fmt;
use std::path::{Path, PathBuf};

/// Where the zone came from, as `raven config show` and the ready line say it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ZoneSource {
    /// `general.timezone` in this file.
    Config(String),
    /// The `TZ` environment variable.
    TzVariable,
    /// The system zone, read from this file.
    System(String),
    /// The running supervisor's zone, and where it took it from.
    Supervisor(String),
    /// Nothing could be read: UTC.
    #[default]
    Fallback,
}

impl fmt::Display for ZoneSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ZoneSource::Config(path) => write!(f, "general.timezone in {path}"),
            ZoneSource::TzVariable => write!(f, "the TZ environment variable"),
            ZoneSource::System(path) => write!(f, "the system zone ({path})"),
            ZoneSource::Supervisor(from) => write!(f, "the running supervisor ({from})"),
            ZoneSource::Fallback => write!(f, "fallback: no zone could be read"),
        }
    }
}

/// The resolved zone, where it came from, and a warning when something could not be read.
#[derive(Debug, Clone, PartialEq)]
pub struct UserZone {
    pub tz: Tz,
    pub source: ZoneSource,
    pub warning: Option<String>,
}

/// The system file that names the zone.
pub const LOCALTIME: &str = "/etc/localtime";

/// Resolves the zone from what the process sees: `configured` (with the config file's path),
/// the `TZ` variable, then [`LOCALTIME`].
pub fn resolve_from_env(configured: Option<(Tz, &Path)>) -> UserZone {
    resolve(configured, std::env::var("TZ").ok().as_deref(), Path::new(LOCALTIME))
}

/// The rule, with every input given (so tests need not touch the process's environment).
pub fn resolve(configured: Option<(Tz, &Path)>, tz_var: Option<&str>, localtime: &Path) -> UserZone {
    if let Some((tz, path)) = configured {
        return UserZone { tz, source: ZoneSource::Config(path.display().to_string()), warning: None };
    }
    if let Some(var) = tz_var.map(str::trim).filter(|v| !v.is_empty()) {
        return match zone_of_tz_var(var) {
            Some(tz) => UserZone { tz, source: ZoneSource::TzVariable, warning: None },
            None => fallback(format!("TZ=`{var}` is not an IANA zone name (say e.g. TZ=Europe/Berlin)")),
        };
    }
    match zone_of_localtime(localtime) {
        Ok(tz) => UserZone { tz, source: ZoneSource::System(localtime.display().to_string()), warning: None },
        Err(why) => fallback(why.to_string()),
    }
}

fn fallback(why: String) -> UserZone {
    let warning = format!("{why}; times are read in UTC. Set `general.timezone` in config.toml to say your zone");
    UserZone { tz: Tz::UTC, source: ZoneSource::Fallback, warning: Some(warning) }
}

/// `Europe/Berlin`, `:Europe/Berlin` or `:/usr/share/zoneinfo/Europe/Berlin`.
fn zone_of_tz_var(var: &str) -> Option<Tz> {
    let name = var.strip_prefix(':').unwrap_or(var);
    zone_of_path_name(name).or_else(|| name.parse().ok())
}

/// The zone a zoneinfo path names: the part after `zoneinfo/`.
fn zone_of_path_name(path: &str) -> Option<Tz> {
    path.rsplit_once("zoneinfo/").and_then(|(_, name)| name.parse().ok())
}

/// Why the system's zone could not be read (said once as a warning; UTC is used).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SystemZoneError {
    #[error("{} points at {target}, not a zone", localtime.display())]
    NotAZone { localtime: PathBuf, target: String },
    #[error("{} names no zone", .0.display())]
    Unnamed(PathBuf),
    #[error("{} is not a link into zoneinfo and {} is missing", localtime.display(), named.display())]
    Missing { localtime: PathBuf, named: PathBuf },
}

/// `/etc/localtime` is a link into the zoneinfo tree; a copy is named by `/etc/timezone` beside it.
fn zone_of_localtime(localtime: &Path) -> Result<Tz, SystemZoneError> {
    if let Ok(target) = std::fs::read_link(localtime) {
        let target = target.display().to_string();
        return zone_of_path_name(&target)
            .ok_or_else(|| SystemZoneError::NotAZone { localtime: localtime.to_owned(), target });
    }
    let named = localtime.with_file_name("timezone");
    match std::fs::read_to_string(&named) {
        Ok(text) => text.trim().parse().map_err(|_| SystemZoneError::Unnamed(named)),
        Err(_) => Err(SystemZoneError::Missing { localtime: localtime.to_owned(), named }),
    }
}

/// A running supervisor's zone, for its clients: `name<TAB>pid<TAB>source` in the data dir.
pub fn publish(path: &Path, zone: &UserZone) -> std::io::Result<()> {
    let line = format!("{}\t{}\t{}\n", zone.tz.name(), std::process::id(), zone.source);
    crate::store::write_atomic(path, line.as_bytes())
}

/// The zone a live supervisor published; `None` when there is none, or its process is gone.
pub fn published(path: &Path) -> Option<UserZone> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut parts = text.trim_end().splitn(3, '\t');
    let (name, pid, from) = (parts.next()?, parts.next()?, parts.next()?);
    Path::new(&format!("/proc/{pid}")).exists().then_some(())?;
    let tz = name.parse().ok()?;
    Some(UserZone { tz, source: ZoneSource::Supervisor(from.to_owned()), warning: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link_to(dir: &Path, target: &str) -> std::path::PathBuf {
        let link = dir.join("localtime");
        std::os::unix::fs::symlink(target, &link).unwrap();
        link
    }

    #[test]
    fn the_config_wins_then_tz_then_the_system_zone() {
        let dir = tempfile::tempdir().unwrap();
        let system = link_to(dir.path(), "/usr/share/zoneinfo/America/New_York");
        let cfg = Path::new("/d/config.toml");
        let z = resolve(Some((chrono_tz::Europe::Berlin, cfg)), Some("Asia/Tokyo"), &system);
        assert_eq!((z.tz, z.source), (chrono_tz::Europe::Berlin, ZoneSource::Config("/d/config.toml".into())));
        let z = resolve(None, Some("Asia/Tokyo"), &system);
        assert_eq!((z.tz, z.source, z.warning), (chrono_tz::Asia::Tokyo, ZoneSource::TzVariable, None));
        let z = resolve(None, Some(":/usr/share/zoneinfo/Asia/Tokyo"), &system);
        assert_eq!(z.tz, chrono_tz::Asia::Tokyo);
        let z = resolve(None, Some(""), &system);
        assert_eq!(z.tz, chrono_tz::America::New_York);
        assert!(z.source.to_string().contains("localtime"), "{}", z.source);
    }

    #[test]
    fn a_published_zone_is_read_while_its_process_lives() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("raven.zone");
        assert_eq!(published(&path), None);
        let zone = UserZone { tz: chrono_tz::Asia::Tokyo, source: ZoneSource::TzVariable, warning: None };
        publish(&path, &zone).unwrap();
        let read = published(&path).unwrap();
        assert_eq!(read.tz, chrono_tz::Asia::Tokyo);
        assert!(read.source.to_string().contains("TZ"), "{}", read.source);
        std::fs::write(&path, "Asia/Tokyo\t999999999\tTZ\n").unwrap();
        assert_eq!(published(&path), None, "a dead supervisor's zone is not used");
    }

    #[test]
    fn an_invalid_tz_falls_back_to_utc_with_a_warning_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let system = link_to(dir.path(), "/usr/share/zoneinfo/America/New_York");
        let z = resolve(None, Some("Mars/Olympus"), &system);
        assert_eq!((z.tz, z.source.clone()), (Tz::UTC, ZoneSource::Fallback));
        assert!(z.warning.unwrap().contains("Mars/Olympus"));
    }

    #[test]
    fn an_unreadable_system_zone_is_utc_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let z = resolve(None, None, &dir.path().join("missing"));
        assert_eq!(z.tz, Tz::UTC);
        assert!(z.warning.unwrap().contains("missing"));
        std::fs::write(dir.path().join("localtime"), b"TZif binary copy").unwrap();
        std::fs::write(dir.path().join("timezone"), "Europe/Berlin\n").unwrap();
        let z = resolve(None, None, &dir.path().join("localtime"));
        assert_eq!(z.tz, chrono_tz::Europe::Berlin);
    }
}
