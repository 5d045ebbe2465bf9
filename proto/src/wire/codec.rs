//! The only place that calls bincode: swapping the body format is a change to this file.

use super::{WireError, MAX_FRAME};
use serde::{de::DeserializeOwned, Serialize};

fn config() -> impl bincode::config::Config {
    // The limit guards decode allocations inside a body (a length field claiming 2^60
    // elements); the frame size itself is checked from the prefix before we get here.
    bincode::config::standard().with_limit::<MAX_FRAME>()
}

pub(super) fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, WireError> {
    bincode::serde::encode_to_vec(value, config()).map_err(|e| WireError::Encode(e.to_string()))
}

pub(super) fn decode<T: DeserializeOwned>(body: &[u8]) -> Result<T, WireError> {
    let (value, used) =
        bincode::serde::decode_from_slice(body, config()).map_err(|e| WireError::Decode(e.to_string()))?;
    if used != body.len() {
        return Err(WireError::Trailing { trailing: body.len() - used });
    }
    Ok(value)
}
