//! The folded tail of behaviors.md: each event (a list item, with any indented
//! continuation lines) folded to one line; the last `n` events.

pub fn folded_tail(behaviors_md: &str, n: usize) -> String {
    let mut events: Vec<String> = Vec::new();
    for line in behaviors_md.lines() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let is_item = line.starts_with("- ") || line.starts_with("* ");
        match events.last_mut() {
            Some(last) if !is_item => {
                last.push(' ');
                last.push_str(t);
            }
            _ => events.push(t.to_owned()),
        }
    }
    let start = events.len().saturating_sub(n);
    events[start..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_fold_to_one_line_each_and_only_the_tail_is_kept() {
        let md = "# Behaviors\n- 03-01 went running\n  before work\n- 03-02 skipped lunch\n- 03-03 read\n";
        assert_eq!(folded_tail(md, 2), "- 03-02 skipped lunch\n- 03-03 read");
        assert_eq!(folded_tail(md, 9).lines().next().unwrap(), "- 03-01 went running before work");
    }
}
