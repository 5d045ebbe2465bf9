//! What a channel takes from a remote service, within bounds: an answer is read chunk by
//! chunk up to a limit (like the LLM client's `llm.max_reply_bytes`), an error text kept for
//! a person is cut and cleaned of terminal escapes, and a client that carries a secret or a
//! message does not follow redirects (a redirect is a failure that says where it pointed).

use super::ChannelError;
use std::time::Duration;

/// The largest answer a channel reads from its service: far above any real Bot API, Matrix
/// or ntfy answer (Telegram's texts are 4,096 characters), far below what would hurt a small box.
pub const MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;

/// The longest error text from a remote that is kept (health board, outbox, logs).
pub const MAX_ERROR_CHARS: usize = 512;

/// The body of `resp`, read chunk by chunk; past `limit` bytes the reading stops and the
/// answer is refused as too large (a transient failure: the service may mend).
pub async fn read_bounded(mut resp: reqwest::Response, limit: usize, what: &str) -> Result<Vec<u8>, ChannelError> {
    let too_large = || ChannelError::Transient(format!("{what}: the answer is over {limit} bytes; it was dropped"));
    if resp.content_length().is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| ChannelError::Transient(format!("{what}: {e}")))? {
        if body.len() + chunk.len() > limit {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The text of an error answer, for a person: at most [`MAX_ERROR_CHARS`] of it read, cut at a
/// character, terminal escapes and control characters taken out.
pub async fn error_text(resp: reqwest::Response) -> String {
    let limit = MAX_ERROR_CHARS * 4;
    let mut resp = resp;
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = resp.chunk().await {
        body.extend_from_slice(&chunk);
        if body.len() >= limit {
            break;
        }
    }
    short(&String::from_utf8_lossy(&body))
}

/// `text` made fit for a person: escapes and control characters out, at most
/// [`MAX_ERROR_CHARS`] characters (an ellipsis says it was cut).
pub fn short(text: &str) -> String {
    let clean = crate::text::sanitize(text);
    let clean = clean.trim();
    match clean.char_indices().nth(MAX_ERROR_CHARS) {
        Some((cut, _)) => format!("{}…", &clean[..cut]),
        None => clean.to_owned(),
    }
}

/// How long the HTTP clients of the adapters wait to connect.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// An HTTP client for an adapter: rustls, a connect timeout, `timeout` for a whole request, and
/// no redirect followed: every adapter's request carries a secret (a token in the path or a
/// header) or the user's message, so a 3xx comes back as the answer and is a failure
/// ([`redirected`]), never a silent send to another host or a POST turned into a GET.
pub fn http_client(timeout: Duration) -> Result<reqwest::Client, ChannelError> {
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| ChannelError::Config(format!("no HTTP client: {e}")))
}

/// The failure a redirect answer is: it names where it pointed, and nothing was delivered.
pub fn redirected(what: &str, resp: &reqwest::Response) -> ChannelError {
    let to = resp.headers().get(reqwest::header::LOCATION).and_then(|v| v.to_str().ok()).unwrap_or("?");
    ChannelError::Transient(format!(
        "{what}: the server answered {} (a redirect to {}); redirects are not followed, nothing was delivered: set the final address in config.toml",
        resp.status(),
        short(to)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_text_is_cut_and_clean() {
        assert_eq!(short("oops \x1b]0;PWNED\x07\x1b[2J\x1b[31mRED\x1b[0m done"), "oops RED done");
        let long = "é".repeat(MAX_ERROR_CHARS * 3);
        let cut = short(&long);
        assert_eq!(cut.chars().count(), MAX_ERROR_CHARS + 1);
        assert!(cut.ends_with('…'));
    }
}
