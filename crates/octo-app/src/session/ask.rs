//! One short request to the model outside a turn (a title, a memory consolidation).

use futures_util::StreamExt;
use octo_agent::Sender;

/// One short request, streamed when the sender can (some servers only stream), as plain text.
pub(super) async fn ask_once(sender: &dyn Sender, req: octo_agent::Request<'_>) -> Option<String> {
    match sender.as_streaming() {
        Some(s) => {
            let mut stream = s.send_stream(req).await.ok()?;
            let mut text = String::new();
            while let Some(item) = stream.next().await {
                if let octo_agent::StreamEvent::TextDelta(t) = item.ok()? {
                    text.push_str(&t);
                }
            }
            Some(text)
        }
        None => sender.send(req).await.ok().map(|r| r.message.text()),
    }
}
