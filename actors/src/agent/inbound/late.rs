//! Saying a heads-up came too late, in words: "too late", "remind me earlier", "太晚了",
//! "早点提醒我". Such a short message, in a conversation where a message told ahead by its kind
//! (a payment, a booking…) came lately, is `/earlier`: that kind's heads-ups come twice as far
//! ahead from now on. Elsewhere it is left to the agent ("I'm too late for the train").

/// Longer messages are not taken for it.
const SHORT: usize = 120;

const PHRASES: &[&str] = &[
    "too late",
    "remind me earlier",
    "tell me earlier",
    "earlier next time",
    "sooner next time",
    "remind me sooner",
    "太晚了",
    "早点提醒",
    "早点告诉我",
    "提前点",
    "再早点",
    "早一点提醒",
];

/// Whether `text` says a heads-up came too late: a short message, not a command.
pub fn says_too_late(text: &str) -> bool {
    super::hush::says_one_of(text, SHORT, PHRASES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_messages_saying_too_late_are_told_from_others() {
        for text in ["Too late, I needed that a week ago", "remind me earlier next time", "太晚了", "下次早点提醒我"]
        {
            assert!(says_too_late(text), "{text}");
        }
        for text in ["/earlier", "see you later", "明天上午10点 交报告", ""] {
            assert!(!says_too_late(text), "{text}");
        }
    }
}
