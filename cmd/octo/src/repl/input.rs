//! Reading one message at the prompt: a line, continued while it ends in a backslash; Ctrl-C
//! on an empty line warns once and leaves the second time; Ctrl-D leaves.

use super::editor::{read_line, Ed, MORE};
use crate::out;
use rustyline::error::ReadlineError;

/// What the prompt gave.
pub(super) enum Input {
    /// A message or a command (not empty).
    Line(String),
    /// Nothing to do (an empty line, a first Ctrl-C).
    Nothing,
    /// Leave the REPL.
    Leave,
    /// The line editor failed.
    Failed(ReadlineError),
}

/// Reads one message after `prompt`; `interrupted` remembers a Ctrl-C on the line before.
pub(super) async fn read(ed: Ed, prompt: String, interrupted: &mut bool) -> (Ed, Input) {
    let (mut ed, line) = read_line(ed, prompt).await;
    let mut line = match line {
        Ok(l) => {
            *interrupted = false;
            let expand =
                ed.helper().is_some_and(|h| h.expand.swap(false, std::sync::atomic::Ordering::SeqCst));
            if expand && l.is_empty() {
                return (ed, Input::Line("/expand".to_owned()));
            }
            l
        }
        Err(ReadlineError::Interrupted) if *interrupted => return (ed, Input::Leave),
        Err(ReadlineError::Interrupted) => {
            *interrupted = true;
            out::status("(press Ctrl-C again on an empty line, or Ctrl-D, to leave)");
            return (ed, Input::Nothing);
        }
        Err(ReadlineError::Eof) => return (ed, Input::Leave),
        Err(e) => return (ed, Input::Failed(e)),
    };
    // A trailing backslash continues the message on the next line.
    while line.ends_with('\\') {
        line.pop();
        line.push('\n');
        let (e, more) = read_line(ed, MORE).await;
        ed = e;
        match more {
            Ok(m) => line.push_str(&m),
            Err(_) => break,
        }
    }
    if line.trim().is_empty() {
        return (ed, Input::Nothing);
    }
    (ed, Input::Line(line))
}
