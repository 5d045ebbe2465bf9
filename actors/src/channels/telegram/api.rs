//! The Bot API calls Telegram's adapter makes, over HTTPS with rustls: `POST
//! <api_base>/bot<token>/<method>` with a JSON body, answered by `{"ok", "result"}` or
//! `{"ok": false, "error_code", "description", "parameters": {"retry_after"}}`. An answer is
//! read within [`MAX_ANSWER_BYTES`]. A 429 is waited out in place when its `retry_after` is
//! short enough; a longer one, a 5xx, a redirect or a lost connection is a transient failure;
//! any other refusal is final. A call whose request went out but whose answer did not come
//! ([`CallError::NoAnswer`]) or came cut short after a 2xx ([`CallError::CutShort`]) may have
//! been acted on. A 2xx whose body is not the Bot API's JSON (a captive portal's page) is
//! [`CallError::NotJson`], with the body.

use crate::channels::remote::{read_bounded, redirected, MAX_ANSWER_BYTES};
use crate::channels::ChannelError;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use std::time::Duration;

/// How often one call waits out a 429 before it gives up (and its caller retries later).
const MAX_WAITS: u32 = 5;

#[derive(Deserialize)]
struct Answer<T> {
    ok: bool,
    #[serde(default)]
    result: Option<T>,
    #[serde(default)]
    error_code: Option<u16>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    parameters: Option<Parameters>,
}

#[derive(Deserialize)]
struct Parameters {
    #[serde(default)]
    retry_after: Option<u64>,
}

/// What a call could not do.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// Not done, or refused: the [`ChannelError`] says which.
    #[error(transparent)]
    Failed(#[from] ChannelError),
    /// The request went out, but no answer came in time: Telegram may have acted on it.
    #[error("{0}")]
    NoAnswer(String),
    /// A 2xx answer whose body could not be read whole (cut off, too slow, too large):
    /// Telegram took the request.
    #[error("{0}")]
    CutShort(String),
    /// A 2xx answer whose body is not the Bot API's JSON (a captive portal's page, say).
    #[error("{why}")]
    NotJson { why: String, body: Vec<u8> },
}

impl From<CallError> for ChannelError {
    /// For a call whose repetition does no harm: anything but a failure is transient.
    fn from(e: CallError) -> Self {
        match e {
            CallError::Failed(e) => e,
            CallError::NoAnswer(why) | CallError::CutShort(why) | CallError::NotJson { why, .. } => {
                ChannelError::Transient(why)
            }
        }
    }
}

/// One bot's endpoint.
pub struct BotApi {
    client: reqwest::Client,
    base: String,
    max_retry_after: Duration,
}

impl BotApi {
    pub fn new(
        api_base: &str,
        token: &str,
        request_timeout: Duration,
        max_retry_after: Duration,
    ) -> Result<Self, ChannelError> {
        let client = crate::channels::http_client(request_timeout)?;
        Ok(BotApi { client, base: format!("{}/bot{token}", api_base.trim_end_matches('/')), max_retry_after })
    }

    /// Calls `method`; its `result` (JSON).
    pub async fn call(&self, method: &str, body: &Value) -> Result<Value, CallError> {
        self.call_for(method, body).await
    }

    /// Calls `method`; its `result`, read as `T` (a missing one is `T`'s default).
    pub async fn call_for<T: DeserializeOwned + Default>(&self, method: &str, body: &Value) -> Result<T, CallError> {
        let mut waits = 0;
        loop {
            match self.once(method, body).await? {
                Ok(result) => return Ok(result),
                Err(retry_after) if waits < MAX_WAITS && retry_after <= self.max_retry_after => {
                    tracing::info!(method, "telegram asks to wait {retry_after:?} (429); waiting");
                    actix_rt::time::sleep(retry_after).await;
                    waits += 1;
                }
                Err(retry_after) => {
                    let why = format!("telegram asks to wait {}s (429)", retry_after.as_secs());
                    return Err(ChannelError::Transient(why).into());
                }
            }
        }
    }

    /// One request: its result, or how long a 429 asks to wait.
    async fn once<T: DeserializeOwned + Default>(
        &self,
        method: &str,
        body: &Value,
    ) -> Result<Result<T, Duration>, CallError> {
        let url = format!("{}/{method}", self.base);
        // The URL holds the token: errors name the method only.
        let what = format!("telegram {method}");
        let sent = self.client.post(&url).json(body).send().await.map_err(|e| not_sent(&what, e))?;
        let status = sent.status();
        if status.is_redirection() {
            return Err(redirected(&what, &sent).into());
        }
        let bytes = match read_bounded(sent, MAX_ANSWER_BYTES, &what).await {
            Ok(bytes) => bytes,
            // The head said yes: Telegram took the request; the rest of its answer was lost.
            Err(e) if status.is_success() => return Err(CallError::CutShort(format!("{e} (after HTTP {status})"))),
            Err(e) => return Err(e.into()),
        };
        let answer: Answer<T> = match serde_json::from_slice(&bytes) {
            Ok(answer) => answer,
            Err(_) if status.is_success() => {
                let why = format!("{what}: HTTP {status} with a body that is not the Bot API's JSON");
                return Err(CallError::NotJson { why, body: bytes });
            }
            Err(_) => {
                let why = format!("{what}: HTTP {status} with a body that is not the Bot API's JSON");
                return Err(crate::channels::failure(status.as_u16(), why).into());
            }
        };
        if answer.ok {
            return Ok(Ok(answer.result.unwrap_or_default()));
        }
        let code = answer.error_code.unwrap_or(status.as_u16());
        let why = format!("{what}: {code} {}", crate::channels::remote::short(&answer.description.unwrap_or_default()));
        match code {
            429 => {
                let secs = answer.parameters.and_then(|p| p.retry_after).unwrap_or(1);
                Ok(Err(Duration::from_secs(secs)))
            }
            _ => Err(crate::channels::failure(code, why).into()),
        }
    }
}

/// A request that got no answer's head: a timeout once connected means it may have gone out
/// (and been acted on); anything else (no connection, say) means it was not delivered.
fn not_sent(what: &str, e: reqwest::Error) -> CallError {
    let may_have_gone_out = e.is_timeout() && !e.is_connect();
    let why = format!("{what}: {}", e.without_url());
    if may_have_gone_out {
        CallError::NoAnswer(format!("{why} (no answer in time)"))
    } else {
        CallError::Failed(ChannelError::Transient(why))
    }
}
