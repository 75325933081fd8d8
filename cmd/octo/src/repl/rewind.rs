//! `/rewind` in the REPL. Alone, it lists the conversation's turns with the files each changed
//! and asks which to go back to and what to put back (files, conversation, both); `/rewind N`
//! goes straight to the plan. The plan is shown, the user says yes, then it is carried out; a
//! file changed after the turn is only overwritten when the user says so for that file.

use super::editor::{read_line, Ed};
use crate::out;
use crate::sanitize::visible;
use octo_app::commands::{Reply, SessionCommand};
use octo_app::{RewindPlan, RewindWhat, Session};

/// Whether a typed answer is yes.
fn yes(answer: Result<String, rustyline::error::ReadlineError>) -> bool {
    matches!(answer.unwrap_or_default().trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

/// Lists the last turns and asks which one to go back to and what to put back; `None` when
/// there is nothing to rewind or the user backs out.
pub(super) async fn pick(session: &Session, mut ed: Ed, what: RewindWhat) -> (Ed, Option<SessionCommand>) {
    let turns = match session.conversation().turns(20).await {
        Ok(t) => t,
        Err(e) => {
            out::error(&visible(&e.to_string()));
            return (ed, None);
        }
    };
    if turns.is_empty() {
        out::status("  nothing to rewind: the conversation has no turns yet");
        return (ed, None);
    }
    out::status("  go back to before which turn? (1 is the last)");
    for t in &turns {
        let files = match t.files.len() {
            0 => String::new(),
            1..=3 => format!(" — changed {}", t.files.join(", ")),
            n => format!(" — changed {}, … ({n} files)", t.files[..3].join(", ")),
        };
        out::status(&visible(&format!("  {:>3}. {}{files}", t.back, t.prompt)));
    }
    let (e, answer) = read_line(ed, "  turn [1]: ").await;
    ed = e;
    let answer = answer.unwrap_or_default();
    let n = match answer.trim() {
        "" => 1,
        a => match a.parse::<usize>() {
            Ok(n) if (1..=turns.len()).contains(&n) => n,
            _ => {
                out::status("  nothing changed");
                return (ed, None);
            }
        },
    };
    let what = if what == RewindWhat::Both {
        let (e, answer) = read_line(ed, "  put back [b]oth, [c]ode only or co[n]versation only? [b] ").await;
        ed = e;
        match answer.unwrap_or_default().trim().to_ascii_lowercase().as_str() {
            "" | "b" | "both" => RewindWhat::Both,
            "c" | "code" => RewindWhat::Code,
            "n" | "conversation" => RewindWhat::Conversation,
            _ => {
                out::status("  nothing changed");
                return (ed, None);
            }
        }
    } else {
        what
    };
    (ed, Some(SessionCommand::Rewind(Some(n), what)))
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
    match session.conversation().rewind(plan, &overwrite).await {
        Ok(report) => {
            for p in &report.restored {
                out::status(&visible(&format!("  restored {}", p.display())));
            }
            for (p, why) in &report.skipped {
                out::status(&visible(&format!("  left {}: {why}", p.display())));
            }
            if report.turns > 0 {
                let s = if report.turns == 1 { "" } else { "s" };
                let branch = report
                    .fork
                    .map(|f| format!("; the conversation before is saved as {f}"))
                    .unwrap_or_default();
                out::status(&visible(&format!("  went back {} turn{s}{branch}", report.turns)));
            }
        }
        Err(e) => out::error(&e.to_string()),
    }
    ed
}
