//! What waiting on a server can end in: a stall (retried once), a whole-response timeout (not
//! retried), an error body read only so far.

use futures_util::StreamExt;
use octo_agent::ProviderError;

/// Whether the error is a stream that went silent (before its first byte or after it).
pub(crate) fn is_stall(e: &ProviderError) -> bool {
    matches!(e, ProviderError::Transport { message } if message.contains("(stalled stream)") || message.contains("(no first byte)"))
}

/// Whether a buffered request ran out of its whole-response time (not retried).
pub(crate) fn is_whole_response_timeout(e: &ProviderError) -> bool {
    matches!(e, ProviderError::Server { status: None, message } if message.contains("no complete response within"))
}

/// At most `cap` bytes of a response body (an error body that may never end).
pub(crate) async fn read_capped(resp: reqwest::Response, cap: usize) -> Vec<u8> {
    let mut body = Vec::new();
    let mut s = resp.bytes_stream();
    while let Some(Ok(chunk)) = s.next().await {
        let room = cap.saturating_sub(body.len());
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= cap {
            break;
        }
    }
    body
}
