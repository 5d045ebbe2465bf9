//! One call of the Matrix client-server API, read within bounds: an answer is read up to
//! [`MAX_ANSWER`] bytes (past it the call fails and the reading stops), a redirect is a failure
//! naming where it pointed, and an error answer is kept cut and cleaned of escapes.

use super::Matrix;
use crate::channels::{remote, ChannelError};
use serde_json::Value;

/// The largest answer read from the homeserver. A `/sync` is filtered to the one room and 100
/// timeline events, so a real one stays far below; a larger one is refused (a transient
/// failure: the sync is tried again after a pause), never read whole.
pub const MAX_ANSWER: usize = remote::MAX_ANSWER_BYTES;

impl Matrix {
    /// One client-server API call under `/_matrix/client/v3`; its JSON answer.
    pub(super) async fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Result<Value, ChannelError> {
        let what = format!("matrix {}", path.split('?').next().unwrap_or(path));
        let mut req = self.client.request(method, format!("{}/_matrix/client/v3{path}", self.base));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        if let Some(b) = body {
            req = req.json(b);
        }
        let sent = req.send().await.map_err(|e| ChannelError::Transient(format!("matrix: {}", e.without_url())))?;
        let status = sent.status();
        if status.is_success() {
            let bytes = remote::read_bounded(sent, MAX_ANSWER, &what).await?;
            return serde_json::from_slice(&bytes)
                .map_err(|e| ChannelError::Transient(format!("{what}: the answer is not JSON ({e})")));
        }
        if status.is_redirection() {
            return Err(remote::redirected(&what, &sent));
        }
        let said = remote::error_text(sent).await;
        let answer: Value = serde_json::from_str(&said).unwrap_or(Value::Null);
        let code = remote::short(answer["errcode"].as_str().unwrap_or_default());
        let detail = answer["error"].as_str().map(remote::short).unwrap_or(said);
        let why = format!("{what}: {status} {code} {detail}");
        if code == "M_UNKNOWN_TOKEN" && self.token_env.is_none() {
            // A password login can be made again: the next attempt logs in anew.
            self.saved().access_token = None;
            return Err(ChannelError::Transient(why));
        }
        Err(crate::channels::failure(status.as_u16(), why))
    }
}
