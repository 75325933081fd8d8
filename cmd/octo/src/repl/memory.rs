//! `/memory edit` and `/dream` in the REPL: the two memory commands that need the terminal —
//! an editor, and a yes before a dream's index is written. The rest of `/memory` and
//! `/remember` are the shared commands'.

use super::editor::{read_line, Ed};
use crate::out;
use crate::sanitize::visible;
use octo_app::{DreamPlan, Session};

/// `/memory edit`: opens the workspace index (already created) in `$VISUAL` or `$EDITOR`.
pub(super) fn edit(path: &std::path::Path) {
    let editor = std::env::var("VISUAL")
        .ok()
        .or_else(|| std::env::var("EDITOR").ok())
        .filter(|e| !e.trim().is_empty())
        .unwrap_or_else(|| "vi".to_owned());
    let mut words = editor.split_whitespace();
    let program = words.next().unwrap_or("vi");
    match std::process::Command::new(program).args(words).arg(path).status() {
        Ok(s) if s.success() => out::status(&visible(&format!(
            "saved {} (later sessions read it; this one keeps the prompt it started with)",
            path.display()
        ))),
        Ok(s) => out::error(&format!("{editor} exited with {s}")),
        Err(e) => out::error(&format!("cannot run {editor} (set $EDITOR): {e}")),
    }
}

/// `/dream`: shows the diff of the consolidated index and asks before writing it.
pub(super) async fn dream(session: &Session, ed: Ed, plan: &DreamPlan) -> Ed {
    if plan.before.as_deref() == Some(plan.after.as_str()) {
        out::status("the dream changed nothing");
        return ed;
    }
    for line in plan.diff.lines() {
        out::status(&visible(line));
    }
    let (ed, answer) = read_line(ed, "  write this index (the old one goes to octo's trash)? [y/N] ").await;
    if matches!(answer.unwrap_or_default().trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        match session.memories().apply_dream(plan) {
            Ok(()) => out::status(&visible(&format!(
                "wrote {} (undo: octo trash restore {})",
                plan.path.display(),
                plan.path.display()
            ))),
            Err(e) => out::error(&visible(&e.to_string())),
        }
    } else {
        out::status("nothing written");
    }
    ed
}
