//! The line editor: prompt, slash-command and `@path` completion, mention expansion.

use crate::out;
use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;
use rustyline::{Context, Editor, Helper};
use std::path::PathBuf;

pub(super) const PROMPT: &str = "octo> ";
pub(super) const MORE: &str = "   .. ";

/// Slash commands and what they do, for /help and completion.
pub(super) const COMMANDS: &[(&str, &str)] = &[
    ("/help", "this list"),
    ("/model", "show the model, or switch: /model endpoint:model (the conversation is kept)"),
    ("/mode", "show the permission mode, or switch: /mode default|accept-edits|plan|auto"),
    ("/plan", "plan mode: read-only tools only"),
    ("/build", "leave plan mode"),
    ("/permissions", "the mode and the permission rules"),
    ("/tools", "the tools the model can call"),
    ("/cost", "tokens and cost so far"),
    ("/compact", "compact the conversation now: /compact [what to focus the summary on]"),
    ("/history", "this directory's saved sessions"),
    ("/resume", "continue a saved session: /resume [N | id prefix | title words]"),
    ("/clear", "forget the conversation (also /new)"),
    ("/new", "start a fresh conversation"),
    ("/exit", "leave (also /quit, Ctrl-D)"),
    ("/quit", "leave"),
];

pub(super) struct OctoHelper {
    pub workspace: PathBuf,
}

impl Completer for OctoHelper {
    type Candidate = Pair;

    fn complete(&self, line: &str, pos: usize, _ctx: &Context<'_>) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = &line[..pos];
        if before.starts_with('/') && !before.contains(' ') {
            let c = COMMANDS
                .iter()
                .filter(|(c, _)| c.starts_with(before))
                .map(|(c, _)| Pair { display: (*c).to_owned(), replacement: format!("{c} ") })
                .collect();
            return Ok((0, c));
        }
        // The byte after the last whitespace character (which may be several bytes long).
        let start =
            before.char_indices().rev().find(|(_, c)| c.is_whitespace()).map_or(0, |(i, c)| i + c.len_utf8());
        let word = &before[start..];
        let Some(partial) = word.strip_prefix('@') else { return Ok((pos, Vec::new())) };
        let (dir, name) = match partial.rfind('/') {
            Some(i) => (&partial[..=i], &partial[i + 1..]),
            None => ("", partial),
        };
        let mut out = Vec::new();
        if let Ok(entries) = std::fs::read_dir(self.workspace.join(dir)) {
            for e in entries.flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                if n.starts_with(name) && !n.starts_with('.') {
                    let slash = if e.file_type().is_ok_and(|t| t.is_dir()) { "/" } else { "" };
                    out.push(Pair {
                        display: format!("{n}{slash}"),
                        replacement: format!("@{dir}{n}{slash}"),
                    });
                }
            }
        }
        out.sort_by(|a, b| a.display.cmp(&b.display));
        Ok((start, out))
    }
}

impl Hinter for OctoHelper {
    type Hint = String;
}
impl Highlighter for OctoHelper {}
impl Validator for OctoHelper {}
impl Helper for OctoHelper {}

pub(super) type Ed = Editor<OctoHelper, DefaultHistory>;

/// Reads a line on a blocking thread (the editor moves there and back).
pub(super) async fn read_line(mut ed: Ed, prompt: &'static str) -> (Ed, Result<String, ReadlineError>) {
    match tokio::task::spawn_blocking(move || {
        let r = ed.readline(prompt);
        (ed, r)
    })
    .await
    {
        Ok(pair) => pair,
        Err(e) => {
            // The blocking task itself failed: nothing sensible remains but to stop.
            out::error(&format!("the line editor failed: {e}"));
            std::process::exit(1)
        }
    }
}

pub(super) fn paint(code: &str, text: &str) -> String {
    if std::env::var_os("NO_COLOR").is_some() {
        text.to_owned()
    } else {
        format!("\x1b[{code}m{text}\x1b[0m")
    }
}

/// Replaces `@path` mentions with the file's content attached after the message.
pub(super) fn expand_mentions(line: &str, workspace: &std::path::Path) -> String {
    let mut attached = String::new();
    for word in line.split_whitespace() {
        let Some(path) = word.strip_prefix('@').filter(|p| !p.is_empty()) else { continue };
        let full = workspace.join(path);
        match std::fs::read_to_string(&full) {
            Ok(text) => {
                let text: String = text.chars().take(100_000).collect();
                attached.push_str(&format!("\n\n<file path=\"{path}\">\n{text}\n</file>"));
            }
            Err(e) if full.exists() => out::status(&format!("octo: could not attach {path}: {e}")),
            Err(_) => {}
        }
    }
    format!("{line}{attached}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_handles_multibyte_spaces_and_paths() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("src")).unwrap();
        std::fs::write(tmp.path().join("src/main.rs"), "").unwrap();
        let h = OctoHelper { workspace: tmp.path().to_path_buf() };
        let history = DefaultHistory::new();
        let ctx = Context::new(&history);
        let line = "fix\u{3000}@sr";
        let (start, c) = h.complete(line, line.len(), &ctx).unwrap();
        assert_eq!(&line[start..], "@sr");
        assert_eq!(c[0].replacement, "@src/");
        let line = "look at\u{a0}@src/ma";
        let (_, c) = h.complete(line, line.len(), &ctx).unwrap();
        assert_eq!(c[0].replacement, "@src/main.rs");
        let (_, c) = h.complete("/he", 3, &ctx).unwrap();
        assert_eq!(c[0].replacement, "/help ");
    }
}
