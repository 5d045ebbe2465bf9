//! Topic tags and content fingerprints, shared by every source that writes the ledger so a
//! cron job and a Sentinel nudge about the same thing meet on one key.

/// Words too common to name a topic, sorted (binary search).
const STOPWORDS: &[&str] = &[
    "about", "after", "again", "also", "and", "are", "back", "before", "but", "can", "could", "did", "does", "don't",
    "done", "dont", "finished", "for", "forget", "from", "got", "had", "has", "have", "here", "how", "just", "let",
    "make", "may", "maybe", "might", "need", "not", "now", "please", "quick", "remember", "remind", "reminder",
    "should", "some", "still", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this",
    "time", "today", "tomorrow", "took", "was", "went", "were", "what", "when", "where", "which", "while", "will",
    "with", "would", "you", "your", "yours",
];

/// The topic tag of a message: its longest word that is not a stop word (at least three
/// letters, lower-cased, a plural `s` dropped; on a tie the later word wins, since English
/// puts the object last: "drink a glass of water" is about water), or `"general"`. "Take your medication" and "Reminder: medications at 9" share "medication".
pub fn topic_of(content: &str) -> String {
    // An escape sequence is not words (`\x1b[31m` would make a topic of `31m…`).
    if content.contains('\x1b') {
        return topic_of(&crate::text::sanitize(content));
    }
    // Hot path of every check: it works on slices of the input and allocates once, for
    // the winner.
    let mut best: Option<(usize, &str)> = None;
    for raw in content.split(|c: char| !(c.is_alphanumeric() || c == '\'')) {
        let word = raw.trim_matches('\'');
        let len = word.chars().count();
        let shorter = best.is_some_and(|(l, _)| len < l);
        if len < 3 || shorter || word.chars().all(char::is_numeric) || is_stopword(word) {
            continue;
        }
        let stem = stem(word);
        let stem_len = stem.chars().count();
        if best.is_none_or(|(l, _)| stem_len >= l) {
            best = Some((stem_len, stem));
        }
    }
    best.map_or_else(|| "general".to_owned(), |(_, w)| w.to_lowercase())
}

/// Case-insensitive, without allocating. Every stop word is ASCII, so a word with other
/// letters is never one.
fn is_stopword(word: &str) -> bool {
    word.is_ascii()
        && STOPWORDS.binary_search_by(|stop| stop.bytes().cmp(word.bytes().map(|b| b.to_ascii_lowercase()))).is_ok()
}

/// A word without its plural `s` (`medications` → `medication`), so two wordings meet on one
/// topic; a word whose `s` is not a plural's (`status`, `analysis`, `class`) is kept whole.
pub fn stem(word: &str) -> &str {
    let b = word.as_bytes();
    let n = b.len();
    let is = |i: usize, c: u8| b[i].eq_ignore_ascii_case(&c);
    if n > 4 && is(n - 1, b's') && ![b's', b'u', b'i'].iter().any(|&c| is(n - 2, c)) {
        &word[..n - 1]
    } else {
        word
    }
}

/// FNV-1a over the content lower-cased with runs of white space folded, so a re-worded
/// spacing or case does not dodge de-duplication. Stable across processes and versions
/// (std's hasher is neither).
pub fn content_hash(content: &str) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h = OFFSET;
    let mut pending_space = false;
    let mut started = false;
    let mut feed_char = |c: char| {
        if c.is_whitespace() {
            pending_space = started;
            return;
        }
        let mut buf = [0u8; 4];
        let bytes = c.encode_utf8(&mut buf).as_bytes();
        let space: &[u8] = if pending_space { b" " } else { b"" };
        for &b in space.iter().chain(bytes) {
            h ^= u64::from(b);
            h = h.wrapping_mul(PRIME);
        }
        pending_space = false;
        started = true;
    };
    for c in content.chars() {
        if c.is_ascii() {
            // The common case, without the Unicode case tables.
            feed_char(c.to_ascii_lowercase());
        } else {
            c.to_lowercase().for_each(&mut feed_char);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopwords_are_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn topics_meet_across_wordings() {
        assert_eq!(topic_of("Take your medication"), "medication");
        assert_eq!(topic_of("Reminder: medications at 9"), "medication");
        assert_eq!(topic_of("Call mom about the dentist appointment"), "appointment");
        assert_eq!(topic_of("hi"), "general");
        assert_eq!(topic_of("back from my run"), "run", "what was done, not the words that say it was");
        assert_eq!(topic_of("took my vitamins"), "vitamin");
        assert_eq!(topic_of("Weekly status"), "status", "not cut to `statu`");
        assert_eq!(topic_of("Run the analysis"), "analysis");
        assert_eq!(topic_of("Send the reports"), "report");
        assert_eq!(topic_of("12345 678"), "general");
    }

    #[test]
    fn escape_sequences_are_not_words() {
        assert_eq!(topic_of("Call the bank \x1b[31mnow\x1b[0m \x1b]0;title\x07"), "bank");
    }

    #[test]
    fn content_hash_ignores_case_and_spacing_only() {
        assert_eq!(content_hash("Drink  water\n"), content_hash("drink water"));
        assert_ne!(content_hash("drink water"), content_hash("drink tea"));
        assert_eq!(content_hash("  Grüß  GOTT "), content_hash("grüß gott"));
        // FNV-1a of "a b" (stable across processes and releases).
        assert_eq!(content_hash("A   B"), 0xe63f991904833892);
    }
}
