//! `/init` in the REPL: the survey streams like any turn (in plan mode), then the proposed
//! `AGENTS.md` is shown as a diff and written only on a yes.

use super::editor::{read_line, Ed};
use super::paint::paint;
use crate::out;
use crate::sanitize::visible;
use octo_app::init::{InitProposal, Survey};
use octo_app::{Mode, Session};

/// Surveys, shows the proposal and asks before writing it.
pub(super) async fn run(session: &Session, ed: Ed, show_thinking: bool) -> anyhow::Result<Ed> {
    let survey = match Survey::of(session.workspace()) {
        Ok(s) => s,
        Err(e) => {
            out::error(&visible(&e.to_string()));
            return Ok(ed);
        }
    };
    if !session.workspace().join(".git").exists() {
        out::status(&paint("2", "  (not a git repository: octo surveys the folder as it is)"));
    }
    out::status(&paint("2", "  surveying the repository in plan mode…"));
    let before = session.status().mode;
    session.permissions().set_mode(Mode::Plan);
    let message = octo_app::Message::user(survey.prompt.clone());
    let result = super::turn::turn_summarized(session, ed, message.into(), show_thinking).await;
    session.permissions().set_mode(before);
    let (ed, summary) = result?;
    match survey.proposal(&summary) {
        Ok(p) => Ok(confirm(session, ed, &p).await),
        Err(e) => {
            out::error(&visible(&e.to_string()));
            Ok(ed)
        }
    }
}

async fn confirm(session: &Session, ed: Ed, p: &InitProposal) -> Ed {
    if p.before.as_deref() == Some(p.after.as_str()) {
        out::status("AGENTS.md is already what the survey proposes; nothing to write");
        return ed;
    }
    for line in p.diff.lines() {
        let colour = if line.starts_with('+') {
            "32"
        } else if line.starts_with('-') {
            "31"
        } else {
            "0"
        };
        out::status(&paint(colour, &visible(line)));
    }
    let question = if p.before.is_some() {
        "  update AGENTS.md (the old one goes to octo's trash)? [y/N] "
    } else {
        "  write AGENTS.md? [y/N] "
    };
    let (ed, answer) = read_line(ed, question).await;
    if matches!(answer.unwrap_or_default().trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        match octo_app::init::write(session, p) {
            Ok(()) => out::status(&visible(&format!("wrote {}", p.path.display()))),
            Err(e) => out::error(&visible(&e.to_string())),
        }
    } else {
        out::status("nothing written");
    }
    ed
}
