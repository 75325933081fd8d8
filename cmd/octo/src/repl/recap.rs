//! What a resumed session shows before its prompt: the last exchange (what the user asked last
//! and the start of the answer), so the user sees where the conversation stands.

use super::paint::paint;
use crate::out;
use crate::sanitize::visible;
use octo_app::{ContentBlock, Message, Role};

/// Lines of the user's message shown.
const ASKED_LINES: usize = 2;
/// Lines of the answer shown.
const ANSWER_LINES: usize = 4;

/// Prints the recap of `history` (nothing for an empty one).
pub(super) fn show(history: &[Message]) {
    for line in lines(history) {
        out::status(&crate::layout::fit(&paint("2", &line), crate::layout::width()));
    }
}

/// The recap's lines: the last message the user typed and the start of the last answer.
fn lines(history: &[Message]) -> Vec<String> {
    let asked = history.iter().rposition(|m| m.role == Role::User && typed(m).is_some());
    let Some(at) = asked else { return Vec::new() };
    let mut out = excerpt("you:  ", typed(&history[at]).unwrap_or_default(), ASKED_LINES);
    let answer =
        history[at..].iter().rev().find(|m| m.role == Role::Assistant && !m.text().trim().is_empty());
    match answer {
        Some(a) => out.extend(excerpt("octo: ", &a.text(), ANSWER_LINES)),
        None => out.push("octo: (no answer yet)".to_owned()),
    }
    out
}

/// What the user typed in `m`: its first text block (octo's additions follow it).
fn typed(m: &Message) -> Option<&str> {
    m.content.iter().find_map(|b| match b {
        ContentBlock::Text { text } if !text.trim().is_empty() => Some(text.as_str()),
        _ => None,
    })
}

/// `text`'s first `max` non-empty lines after `label` (continuations indented under it), an
/// ellipsis when there is more; made inert for the terminal.
fn excerpt(label: &str, text: &str, max: usize) -> Vec<String> {
    let all: Vec<&str> = text.lines().map(str::trim_end).filter(|l| !l.trim().is_empty()).collect();
    let pad = " ".repeat(label.chars().count());
    let mut out: Vec<String> = all
        .iter()
        .take(max)
        .enumerate()
        .map(|(i, l)| {
            let l: String = l.chars().take(240).collect();
            format!("{}{}", if i == 0 { label } else { &pad }, visible(&l))
        })
        .collect();
    if all.len() > max {
        out.push(format!("{pad}…"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_question_and_the_start_of_its_answer() {
        let mut asked = Message::user("now fix the parser");
        asked.content.push(ContentBlock::text("<memory-update>\nnotes\n</memory-update>"));
        let history = vec![
            Message::user("first question"),
            Message::assistant("first answer"),
            asked,
            Message::assistant("I fixed it:\n\n- the tokenizer\n- the tests\n- the docs\n- the changelog"),
        ];
        let got = lines(&history);
        assert_eq!(got[0], "you:  now fix the parser");
        assert_eq!(got[1], "octo: I fixed it:");
        assert_eq!(got.len(), 6, "{got:?}");
        assert_eq!(got[5].trim(), "…");
        assert!(lines(&[]).is_empty());
        assert_eq!(lines(&[Message::user("hello?")])[1], "octo: (no answer yet)");
    }

    #[test]
    fn escapes_in_the_history_are_inert() {
        let got = lines(&[Message::user("hi"), Message::assistant("\x1b]0;pwned\x07done")]);
        assert!(!got[1].contains('\x1b'), "{got:?}");
    }
}
