//! `/rewind [N]`: shows what undoing the last N turns would restore, asks, then does it. A file
//! changed after the turn is only overwritten when the user says so for that file.

use super::editor::{read_line, Ed};
use crate::out;
use crate::sanitize::visible;
use octo_app::{Session, Undo};

/// Whether a typed answer is yes.
fn yes(answer: Result<String, rustyline::error::ReadlineError>) -> bool {
    matches!(answer.unwrap_or_default().trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

/// Runs `/rewind n`.
pub(super) async fn run(session: &Session, mut ed: Ed, n: usize) -> Ed {
    let plan = match session.rewind_plan(n).await {
        Ok(p) => p,
        Err(e) => {
            out::error(&e.to_string());
            return ed;
        }
    };
    if plan.turns == 0 {
        out::status("nothing to rewind: the conversation has no turns yet");
        return ed;
    }
    let s = if plan.turns == 1 { "" } else { "s" };
    out::status(&format!("rewind the last {} turn{s}:", plan.turns));
    if plan.files.is_empty() {
        out::status("  no file changes to undo");
    }
    for f in &plan.files {
        let what = match f.undo {
            Undo::Restore => "restore",
            Undo::Delete => "delete (the turn created it)",
        };
        let warn = if f.changed_since { " — changed since the turn" } else { "" };
        out::status(&visible(&format!("  {what}: {}{warn}", f.path.display())));
    }
    for c in &plan.commands {
        out::status(&visible(&format!("  not undone (a shell command): {c}")));
    }
    let (e, answer) = read_line(ed, "  rewind? [y/N] ").await;
    ed = e;
    if !yes(answer) {
        out::status("  nothing changed");
        return ed;
    }
    let mut overwrite = Vec::new();
    for f in plan.files.iter().filter(|f| f.changed_since) {
        out::status(&visible(&format!("  {} was changed after the turn.", f.path.display())));
        let (e, answer) = read_line(ed, "  overwrite it with the old content? [y/N] ").await;
        ed = e;
        if yes(answer) {
            overwrite.push(f.path.clone());
        }
    }
    match session.rewind(&plan, &overwrite).await {
        Ok(report) => {
            for p in &report.restored {
                out::status(&visible(&format!("  restored {}", p.display())));
            }
            for (p, why) in &report.skipped {
                out::status(&visible(&format!("  left {}: {why}", p.display())));
            }
            out::status(&format!("  forgot the last {} turn{s}", report.turns));
        }
        Err(e) => out::error(&e.to_string()),
    }
    ed
}
