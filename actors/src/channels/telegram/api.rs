//! The Bot API calls Telegram's adapter makes, over HTTPS with rustls: `POST
//! <api_base>/bot<token>/<method>` with a JSON body, answered by `{"ok", "result"}` or
//! `{"ok": false, "error_code", "description", "parameters": {"retry_after"}}`. A 429 is
//! waited out in place when its `retry_after` is short enough; a longer one, a 5xx or a lost
//! connection is a transient failure; any other refusal is final.

use crate::channels::ChannelError;
use serde::Deserialize;
use serde_json::Value;
use std::time::Duration;

/// How often one call waits out a 429 before it gives up (and its caller retries later).
const MAX_WAITS: u32 = 5;

#[derive(Deserialize)]
struct Answer {
    ok: bool,
    #[serde(default)]
    result: Value,
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

    /// Calls `method`; its `result`.
    pub async fn call(&self, method: &str, body: &Value) -> Result<Value, ChannelError> {
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
                    return Err(ChannelError::Transient(format!(
                        "telegram asks to wait {}s (429)",
                        retry_after.as_secs()
                    )))
                }
            }
        }
    }

    /// One request: its result, or how long a 429 asks to wait.
    async fn once(&self, method: &str, body: &Value) -> Result<Result<Value, Duration>, ChannelError> {
        let url = format!("{}/{method}", self.base);
        // The URL holds the token: errors name the method only.
        let sent = self
            .client
            .post(&url)
            .json(body)
            .send()
            .await
            .map_err(|e| ChannelError::Transient(format!("telegram {method}: {}", e.without_url())))?;
        let status = sent.status();
        let bytes = sent
            .bytes()
            .await
            .map_err(|e| ChannelError::Transient(format!("telegram {method}: {}", e.without_url())))?;
        let answer: Answer = serde_json::from_slice(&bytes).map_err(|_| {
            let why = format!("telegram {method}: HTTP {status} with a body that is not the Bot API's JSON");
            crate::channels::failure(status.as_u16(), why)
        })?;
        if answer.ok {
            return Ok(Ok(answer.result));
        }
        let code = answer.error_code.unwrap_or(status.as_u16());
        let why = format!("telegram {method}: {code} {}", answer.description.unwrap_or_default());
        match code {
            429 => {
                let secs = answer.parameters.and_then(|p| p.retry_after).unwrap_or(1);
                Ok(Err(Duration::from_secs(secs)))
            }
            _ => Err(crate::channels::failure(code, why)),
        }
    }
}
