//! Where each effective config value came from, for `raven config show`.

use super::RavenConfig;
use std::path::Path;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    Default,
    File(String),
    /// Resolved from outside the file (the zone: `TZ`, the system zone).
    Resolved(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Provenance {
    /// `(dotted key, value as TOML, origin)` for every leaf, in file order of the defaults.
    pub entries: Vec<(String, String, Origin)>,
}

impl Provenance {
    pub(super) fn new(config: &RavenConfig, file: &toml::Table, path: &Path) -> Self {
        let effective = toml::Table::try_from(config).unwrap_or_default();
        let mut entries = Vec::new();
        walk(&effective, Some(file), "", path, &mut entries);
        Provenance { entries }
    }

    /// `general.timezone` as resolved outside the file, with where it came from (and the
    /// warning when nothing could be read).
    pub fn set_zone_of(&mut self, config: &RavenConfig) {
        let g = &config.general;
        let zone = crate::time::UserZone {
            tz: g.timezone,
            source: g.timezone_source.clone(),
            warning: g.timezone_warning.clone(),
        };
        if !matches!(zone.source, crate::time::ZoneSource::Config(_)) {
            self.set_zone(&zone);
        }
    }

    pub(super) fn set_zone(&mut self, zone: &crate::time::UserZone) {
        let from = match &zone.warning {
            Some(w) => format!("{} ({w})", zone.source),
            None => zone.source.to_string(),
        };
        for (key, value, origin) in &mut self.entries {
            if key == "general.timezone" {
                *value = format!("\"{}\"", zone.tz.name());
                *origin = Origin::Resolved(from.clone());
            }
        }
    }

    /// One line a key: `key = value    # origin`.
    pub fn render(&self) -> String {
        let width = self.entries.iter().map(|(k, v, _)| k.len() + v.len() + 3).max().unwrap_or(0);
        let mut out = String::new();
        for (key, value, origin) in &self.entries {
            let line = format!("{key} = {value}");
            let from = match origin {
                Origin::Default => "default".to_owned(),
                Origin::File(p) => p.clone(),
                Origin::Resolved(from) => from.clone(),
            };
            out.push_str(&format!("{line:<width$}  # {from}\n"));
        }
        out
    }
}

fn walk(
    table: &toml::Table,
    file: Option<&toml::Table>,
    prefix: &str,
    path: &Path,
    out: &mut Vec<(String, String, Origin)>,
) {
    for (key, value) in table {
        let dotted = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
        let in_file = file.and_then(|f| f.get(key));
        match value {
            toml::Value::Table(inner) => walk(inner, in_file.and_then(toml::Value::as_table), &dotted, path, out),
            leaf => {
                let origin = match in_file {
                    Some(_) => Origin::File(path.display().to_string()),
                    None => Origin::Default,
                };
                out.push((dotted, leaf.to_string(), origin));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_from_the_file_are_marked_as_such() {
        let path = Path::new("/d/config.toml");
        let (_, p) = RavenConfig::parse("[policy]\nmax_per_day = 3\n", path).unwrap();
        let day = p.entries.iter().find(|(k, _, _)| k == "policy.max_per_day").unwrap();
        assert_eq!(day.1, "3");
        assert_eq!(day.2, Origin::File("/d/config.toml".into()));
        let hour = p.entries.iter().find(|(k, _, _)| k == "policy.max_per_hour").unwrap();
        assert_eq!(hour.2, Origin::Default);
        assert!(p.render().contains("policy.quiet_hours.start = \"23:00\""));
    }
}
