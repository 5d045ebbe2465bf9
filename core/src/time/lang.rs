//! The language the rules speak to the user in: English or Chinese, as `general.language` says,
//! or, when it says `auto`, as the user's notes are written.

use serde::{Deserialize, Serialize};

/// How much of the notes is read to tell their language: enough for a few hundred lines, and
/// a bounded cost on every tick whatever their size.
const SAMPLE: usize = 16 * 1024;

/// A language the rules write in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    English,
    Chinese,
}

/// `general.language`: `auto` (the notes' language), `en` or `zh`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LanguageSetting {
    #[default]
    Auto,
    En,
    Zh,
}

impl LanguageSetting {
    /// The language to write in for a user whose notes are `notes`.
    pub fn resolve(self, notes: &str) -> Language {
        match self {
            LanguageSetting::En => Language::English,
            LanguageSetting::Zh => Language::Chinese,
            LanguageSetting::Auto => Language::of_notes(notes),
        }
    }
}

impl Language {
    /// Chinese when the start of the notes holds more Chinese characters than one and a half
    /// times its English words (a word says about as much as one or two characters); else
    /// English, the language of empty notes too.
    pub fn of_notes(notes: &str) -> Language {
        let mut end = notes.len().min(SAMPLE);
        while !notes.is_char_boundary(end) {
            end -= 1;
        }
        let sample = &notes[..end];
        let han = sample.chars().filter(|c| is_han(*c)).count();
        let words = sample.split(|c: char| !c.is_ascii_alphabetic()).filter(|w| !w.is_empty()).count();
        if han * 2 > words * 3 {
            Language::Chinese
        } else {
            Language::English
        }
    }
}

fn is_han(c: char) -> bool {
    matches!(c, '\u{4E00}'..='\u{9FFF}' | '\u{3400}'..='\u{4DBF}' | '\u{F900}'..='\u{FAFF}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notes_language_is_the_one_most_of_them_are_written_in() {
        let cases = [
            ("", Language::English),
            ("# Memory\nPay the nanny on the 20th of every month\n", Language::English),
            ("# 备忘\n每月20号 付保姆工资 5000\n12月20日 小宝 三岁体检\n", Language::Chinese),
            // A few Chinese words among English notes stay English.
            (
                "3/20 结婚纪念日 提前一周订餐厅\nPay the rent on March 20\nDentist on March 20 at 10am\n",
                Language::English,
            ),
            ("Dentist 下周三下午3点 牙医 体检 付款\n", Language::Chinese),
        ];
        for (notes, expected) in cases {
            assert_eq!(Language::of_notes(notes), expected, "{notes:?}");
        }
        let long = format!("{}{}", "word ".repeat(SAMPLE), "中文".repeat(SAMPLE));
        assert_eq!(Language::of_notes(&long), Language::English, "only the start is read");
        assert_eq!(LanguageSetting::Zh.resolve("plain English"), Language::Chinese);
        assert_eq!(LanguageSetting::En.resolve("中文笔记"), Language::English);
    }
}
