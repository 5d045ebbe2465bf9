//! Topic tags and content fingerprints, shared by every source that writes the ledger so a
//! cron job and a Sentinel nudge about the same thing meet on one key.

/// Words too common to name a topic.
const STOPWORDS: &[&str] = &[
    "about", "after", "again", "also", "and", "are", "before", "but", "can", "could", "did",
    "does", "don't", "dont", "for", "from", "forget", "had", "has", "have", "here", "how", "just",
    "let", "make", "may", "maybe", "might", "need", "not", "now", "please", "quick", "reminder",
    "remember", "remind", "should", "some", "still", "than", "that", "the", "their", "them",
    "then", "there", "these", "they", "this", "time", "today", "tomorrow", "was", "were", "what",
    "when", "where", "which", "while", "will", "with", "would", "you", "your", "yours",
];

/// The topic tag of a message: its longest word that is not a stop word (at least three
/// letters, lower-cased, a plural `s` dropped; on a tie the later word wins, since English
/// puts the object last: "drink a glass of water" is about water), or `"general"`. "Take your medication" and "Reminder: medications at 9" share "medication".
pub fn topic_of(content: &str) -> String {
    let mut best: Option<String> = None;
    for raw in content.split(|c: char| !(c.is_alphanumeric() || c == '\'')) {
        let word = raw.trim_matches('\'');
        if word.chars().count() < 3 || word.chars().all(|c| c.is_numeric()) {
            continue;
        }
        let mut w = word.to_lowercase();
        if STOPWORDS.contains(&w.as_str()) {
            continue;
        }
        if w.len() > 4 && w.ends_with('s') && !w.ends_with("ss") {
            w.pop();
        }
        let better = match &best {
            None => true,
            Some(b) => {
                let (wl, bl) = (w.chars().count(), b.chars().count());
                wl >= bl
            }
        };
        if better {
            best = Some(w);
        }
    }
    best.unwrap_or_else(|| "general".to_owned())
}

/// FNV-1a over the content lower-cased with runs of white space folded, so a re-worded
/// spacing or case does not dodge de-duplication. Stable across processes and versions
/// (std's hasher is neither).
pub fn content_hash(content: &str) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h = OFFSET;
    let mut feed = |b: u8| {
        h ^= u64::from(b);
        h = h.wrapping_mul(PRIME);
    };
    let mut pending_space = false;
    let mut started = false;
    for c in content.chars().flat_map(char::to_lowercase) {
        if c.is_whitespace() {
            pending_space = started;
            continue;
        }
        if pending_space {
            feed(b' ');
            pending_space = false;
        }
        started = true;
        let mut buf = [0u8; 4];
        for b in c.encode_utf8(&mut buf).bytes() {
            feed(b);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics_meet_across_wordings() {
        assert_eq!(topic_of("Take your medication"), "medication");
        assert_eq!(topic_of("Reminder: medications at 9"), "medication");
        assert_eq!(
            topic_of("Call mom about the dentist appointment"),
            "appointment"
        );
        assert_eq!(topic_of("hi"), "general");
        assert_eq!(topic_of("12345 678"), "general");
    }

    #[test]
    fn content_hash_ignores_case_and_spacing_only() {
        assert_eq!(content_hash("Drink  water\n"), content_hash("drink water"));
        assert_ne!(content_hash("drink water"), content_hash("drink tea"));
    }
}
