//! Splitting a long answer into chat messages: at most `limit` characters each, cut at a
//! paragraph, then a line, then a space; a code block cut in two is closed at the end of one
//! message and opened again (with its language) at the start of the next.

/// `text` as messages of at most `limit` characters (at least 64).
pub fn split(text: &str, limit: usize) -> Vec<String> {
    let limit = limit.max(64);
    let mut out = Vec::new();
    let mut rest = text.trim_end().to_owned();
    // The fence that is open at the start of `rest` (its opening line), if any.
    let mut reopen: Option<String> = None;
    while !rest.is_empty() {
        let prefix = reopen.as_ref().map(|f| format!("{f}\n")).unwrap_or_default();
        let body_room = limit.saturating_sub(prefix.chars().count() + 4);
        if prefix.chars().count() + rest.chars().count() <= limit {
            out.push(format!("{prefix}{rest}"));
            break;
        }
        let cut = cut_point(&rest, body_room);
        let (head, tail) = rest.split_at(cut);
        let mut chunk = format!("{prefix}{}", head.trim_end());
        // Is a fence still open at the end of this chunk?
        let open = open_fence(&chunk);
        if open.is_some() {
            chunk.push_str("\n```");
        }
        out.push(chunk);
        reopen = open;
        rest = tail.trim_start_matches('\n').to_owned();
    }
    out
}

/// Byte index at most `room` characters in, at the best boundary found.
fn cut_point(s: &str, room: usize) -> usize {
    let hard = s.char_indices().nth(room).map_or(s.len(), |(i, _)| i);
    let window = &s[..hard];
    let min = hard / 2;
    for sep in ["\n\n", "\n", " "] {
        if let Some(i) = window.rfind(sep).filter(|i| *i >= min) {
            return i + sep.len();
        }
    }
    hard.max(s.char_indices().nth(1).map_or(s.len(), |(i, _)| i))
}

/// The fence to reopen for the code block left open at the end of `text`: three backticks and
/// the block's language (a short word; whatever else the opening line held is not repeated).
fn open_fence(text: &str) -> Option<String> {
    let mut open: Option<String> = None;
    for line in text.lines() {
        let Some(after) = line.trim().strip_prefix("```") else { continue };
        if open.is_none() && after.contains("```") {
            // Opened and closed on one line.
            continue;
        }
        open = match open {
            Some(_) => None,
            None => {
                let lang: String = after
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || "+-#._".contains(*c))
                    .take(24)
                    .collect();
                Some(format!("```{lang}"))
            }
        };
    }
    open
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_line_longer_than_a_message_does_not_flood() {
        let text = format!("```{}\nmore\n```\n```x``` and text", "{\"k\":1}".repeat(300));
        let parts = split(&text, 500);
        assert!(parts.len() < 12, "{} parts", parts.len());
        assert!(parts.iter().all(|p| p.chars().count() <= 500));
    }

    #[test]
    fn short_text_is_one_message() {
        assert_eq!(split("hello", 100), vec!["hello"]);
    }

    #[test]
    fn a_long_answer_splits_on_paragraphs_within_the_limit() {
        let para = "word ".repeat(40);
        let text = format!("{para}\n\n{para}\n\n{para}");
        let parts = split(&text, 450);
        assert!(parts.len() >= 2);
        assert!(parts.iter().all(|p| p.chars().count() <= 450), "{parts:?}");
        assert_eq!(parts.join(" ").split_whitespace().count(), text.split_whitespace().count());
    }

    #[test]
    fn a_code_block_cut_in_two_is_closed_and_reopened() {
        let code: String = (0..200).map(|i| format!("let x{i} = {i};\n")).collect();
        let text = format!("Here:\n\n```rust\n{code}```\n\nDone.");
        let parts = split(&text, 1000);
        assert!(parts.len() > 2);
        for p in &parts {
            assert!(p.chars().count() <= 1000, "{}", p.len());
            assert_eq!(p.matches("```").count() % 2, 0, "unbalanced fences in {p}");
        }
        assert!(parts[1].starts_with("```rust\n"), "{}", &parts[1][..20]);
        let joined: String = parts.concat();
        assert_eq!(joined.matches("let x").count(), 200);
        assert!(parts.last().unwrap().ends_with("Done."));
    }

    #[test]
    fn fifty_kilobytes_split_into_telegram_sized_messages() {
        let text: String = (0..1000).map(|i| format!("Line {i} of a long answer.\n")).collect();
        assert!(text.len() > 25_000);
        let big = text.repeat(2);
        let parts = split(&big, 4096);
        assert!(parts.iter().all(|p| p.chars().count() <= 4096));
        assert_eq!(parts.concat().matches("Line ").count(), 2000);
    }

    #[test]
    fn text_without_spaces_is_cut_hard_on_character_boundaries() {
        let text = "é".repeat(500);
        let parts = split(&text, 100);
        assert!(parts.iter().all(|p| p.chars().count() <= 100));
        assert_eq!(parts.concat().chars().count(), 500);
    }
}
