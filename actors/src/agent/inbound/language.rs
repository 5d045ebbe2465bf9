//! The language a chat answer is written in: Chinese when the user's own words are
//! (`/remind 明天上午10点 交报告`, `让我静静`), else `general.language`, which under `auto` is the
//! language of the start of MEMORY.md (as the rules' reminders are).

use crate::time::{Language, LanguageSetting};
use std::path::Path;

/// How much of the notes `auto` reads (as `Language::of_notes` samples).
const SAMPLE: u64 = 16 * 1024;

/// The language to answer `text` in, for a user with `setting` and notes at `memory`.
pub fn of_answer(text: &str, setting: LanguageSetting, memory: &Path) -> Language {
    if Language::of_notes(text) == Language::Chinese {
        return Language::Chinese;
    }
    let mut notes = String::new();
    if let Ok(file) = std::fs::File::open(memory) {
        // A file that is not text reads as none: English, the default.
        let _ = std::io::Read::read_to_string(&mut std::io::Read::take(file, SAMPLE), &mut notes);
    }
    setting.resolve(&notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_then_the_setting_then_the_notes() {
        let dir = tempfile::tempdir().unwrap();
        let memory = dir.path().join("MEMORY.md");
        assert_eq!(of_answer("/list", LanguageSetting::Auto, &memory), Language::English, "no notes");
        assert_eq!(of_answer("/remind 明天 交报告", LanguageSetting::En, &memory), Language::Chinese);
        std::fs::write(&memory, "# 备忘\n每月20号 付保姆工资\n").unwrap();
        assert_eq!(of_answer("/list", LanguageSetting::Auto, &memory), Language::Chinese);
        assert_eq!(of_answer("/list", LanguageSetting::En, &memory), Language::English);
    }
}
