//! Tier 2: folding old turns into a summary written by the model.

use super::tokens::estimate_tokens;
use crate::error::ProviderError;
use crate::message::{ContentBlock, Message, Role, ToolResultPart};
use crate::sender::{Request, Sender, StreamEvent};
use futures_util::StreamExt;

/// Asks the model once and returns its text, streaming when the sender can (some servers only
/// stream).
pub async fn ask_text(sender: &dyn Sender, request: Request<'_>) -> Result<String, ProviderError> {
    match sender.as_streaming() {
        Some(s) => {
            let mut stream = s.send_stream(request).await?;
            let mut text = String::new();
            while let Some(item) = stream.next().await {
                if let StreamEvent::TextDelta(t) = item? {
                    text.push_str(&t);
                }
            }
            Ok(text)
        }
        None => Ok(sender.send(request).await?.message.text()),
    }
}

/// Whether a message starts a user turn (a prompt, not only tool results).
fn starts_turn(m: &Message) -> bool {
    m.role == Role::User
        && m.content.iter().any(|b| matches!(b, ContentBlock::Text { .. } | ContentBlock::Image { .. }))
}

/// Where to cut: the earliest start of a user turn such that the turns from there on fit in
/// `keep_tokens`; at least the last turn is always kept. `None` when there is nothing before it.
pub fn split_point(history: &[Message], keep_tokens: u64) -> Option<usize> {
    let starts: Vec<usize> = (0..history.len()).filter(|&i| starts_turn(&history[i])).collect();
    let last = *starts.last()?;
    let mut split = last;
    for &s in starts.iter().rev().skip(1) {
        if estimate_tokens(&history[s..]) > keep_tokens {
            break;
        }
        split = s;
    }
    (split > 0).then_some(split)
}

/// A readable transcript of `messages` for the summarizer (long tool output cut).
pub fn transcript(messages: &[Message]) -> String {
    let cut = |s: &str, n: usize| -> String {
        if s.len() <= n {
            s.to_owned()
        } else {
            let head: String = s.chars().take(n).collect();
            format!("{head}… [{} more bytes]", s.len() - head.len())
        }
    };
    let mut out = String::new();
    for m in messages {
        for b in &m.content {
            match (m.role, b) {
                (Role::User, ContentBlock::Text { text }) => {
                    out.push_str(&format!("\nUSER: {}\n", cut(text, 4_000)));
                }
                (Role::Assistant, ContentBlock::Text { text }) => {
                    out.push_str(&format!("\nASSISTANT: {}\n", cut(text, 4_000)));
                }
                (_, ContentBlock::ToolUse { name, input, .. }) => {
                    out.push_str(&format!("TOOL CALL {name} {}\n", cut(&input.to_string(), 500)));
                }
                (_, ContentBlock::ToolResult { content, is_error, .. }) => {
                    let text: Vec<&str> = content.iter().filter_map(ToolResultPart::as_text).collect();
                    out.push_str(&format!(
                        "TOOL {}: {}\n",
                        if *is_error { "ERROR" } else { "RESULT" },
                        cut(&text.join("\n"), 1_500)
                    ));
                }
                _ => {}
            }
        }
    }
    out
}

const SUMMARY_SYSTEM: &str =
    "You compress coding-agent conversations. Write a faithful, compact summary that lets the \
agent continue the work without the original messages.";

fn summary_prompt(transcript: &str, focus: Option<&str>) -> String {
    let focus = focus.map(|f| format!("\nPay particular attention to: {f}\n")).unwrap_or_default();
    format!(
        "Summarize the conversation below under these headings:\n\
         ## Goals\n## Decisions\n## Files touched\n## Open tasks\n## Errors and how they were handled\n\
         Keep exact file paths, names, commands and numbers. Omit chit-chat.{focus}\n\n<conversation>\n{transcript}\n</conversation>"
    )
}

/// Folds `history[..split]` into one summary (written by `sender`), which becomes a message of
/// its own at the start of the history (so it never depends on a message that is not yet
/// committed). Returns the number of messages folded.
pub async fn fold(
    sender: &dyn Sender,
    history: &mut Vec<Message>,
    split: usize,
    focus: Option<&str>,
    archive: Option<std::path::PathBuf>,
) -> Result<usize, ProviderError> {
    let split = split.min(history.len());
    if split == 0 {
        return Ok(0);
    }
    let text = transcript(&history[..split]);
    let prompt = [Message::user(summary_prompt(&text, focus))];
    let request = Request::new(&prompt).with_system(SUMMARY_SYSTEM).with_max_tokens(Some(4_000));
    let summary = ask_text(sender, request).await?;
    if summary.trim().is_empty() {
        return Err(ProviderError::MalformedStream { message: "the model returned an empty summary".into() });
    }
    let where_ =
        archive.map(|p| format!("; the full transcript is archived at {}", p.display())).unwrap_or_default();
    let header = format!(
        "[Summary of the earlier conversation: {split} messages were folded to save context{where_}.]\n\n{}",
        summary.trim()
    );
    history.drain(..split);
    history.insert(0, Message::user(header));
    Ok(split)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round(i: usize) -> Vec<Message> {
        vec![
            Message::user(format!("prompt {i} {}", "x".repeat(400))),
            Message::new(
                Role::Assistant,
                vec![ContentBlock::ToolUse { id: format!("t{i}"), name: "grep".into(), input: json!({}) }],
            ),
            Message::new(
                Role::User,
                vec![ContentBlock::tool_result(format!("t{i}"), "y".repeat(400), false)],
            ),
            Message::assistant("done"),
        ]
    }

    #[test]
    fn splits_only_at_turn_starts_and_keeps_the_last_turn() {
        let h: Vec<Message> = (0..10).flat_map(round).collect();
        let s = split_point(&h, 300).unwrap();
        assert_eq!(s, 36, "only the last turn fits");
        let s = split_point(&h, 600).unwrap();
        assert_eq!(s, 32, "two turns fit; a turn start, never between a call and its result");
        let s = split_point(&h, 100_000);
        assert_eq!(s, None, "everything fits: nothing to fold");
        let big = split_point(&h, 1_000).unwrap();
        assert!(big < 32 && big.is_multiple_of(4));
        assert_eq!(split_point(&[Message::user("only")], 10), None);
    }

    #[test]
    fn transcripts_cut_long_output() {
        let t = transcript(&round(1));
        assert!(t.contains("USER: prompt 1") && t.contains("TOOL CALL grep") && t.contains("TOOL RESULT"));
    }
}
