//! `/rewind [N]` in the REPL: the shared command plans what undoing the last N turns would
//! restore; this shows the plan, asks, then does it. A file changed after the turn is only
//! overwritten when the user says so for that file.

use super::editor::{read_line, Ed};
use crate::out;
use crate::sanitize::visible;
use octo_app::commands::Reply;
use octo_app::{RewindPlan, Session};

/// Whether a typed answer is yes.
fn yes(answer: Result<String, rustyline::error::ReadlineError>) -> bool {
    matches!(answer.unwrap_or_default().trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

/// Shows `plan`, asks, and carries it out.
pub(super) async fn run(session: &Session, mut ed: Ed, plan: &RewindPlan) -> Ed {
    let lines = Reply::Rewind(Box::new(plan.clone())).lines();
    for line in &lines {
        out::status(&visible(line));
    }
    if plan.turns == 0 {
        return ed;
    }
    let s = if plan.turns == 1 { "" } else { "s" };
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
    match session.rewind(plan, &overwrite).await {
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
