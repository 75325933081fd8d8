//! `/review [target]` in the REPL: octo gathers the diff, the review streams like any turn (in
//! plan mode), and its findings are listed after it. A user's own `review` command or skill runs
//! instead, as written.

use super::editor::Ed;
use super::paint::paint;
use crate::out;
use crate::sanitize::visible;
use octo_app::review::{self, ReviewTarget, Severity};
use octo_app::{Mode, Session};

/// Runs the review of `arg` (or the user's `review` command with it).
pub(super) async fn run(session: &Session, ed: Ed, arg: &str, show_thinking: bool) -> anyhow::Result<Ed> {
    if octo_app::review::has_own(session) {
        return Ok(match super::invoke::run(session, ed, "/review", arg).await {
            (ed, Some(p)) => super::turn::turn(session, ed, p, show_thinking).await?,
            (ed, None) => ed,
        });
    }
    let gathered = ReviewTarget::parse(arg, session.workspace())
        .and_then(|target| Ok((review::gather(session.workspace(), &target)?, target)));
    let diff = match gathered {
        Err(e) => {
            out::error(&visible(&e.to_string()));
            return Ok(ed);
        }
        Ok((None, target)) => {
            out::status(&format!("nothing to review: no changes in {}", target.describe()));
            return Ok(ed);
        }
        Ok((Some(diff), _)) => diff,
    };
    out::status(&paint(
        "2",
        &format!("  reviewing {} ({} file(s)) in plan mode…", diff.description, diff.files),
    ));
    let before = session.status().mode;
    session.permissions().set_mode(Mode::Plan);
    let message = octo_app::Message::user(review::prompt(&diff, None));
    let result = super::turn::turn_summarized(session, ed, message.into(), show_thinking).await;
    session.permissions().set_mode(before);
    let (ed, summary) = result?;
    if summary.failed() {
        return Ok(ed);
    }
    match review::parse(&summary.answer) {
        Ok(r) => {
            for (i, line) in r.lines().iter().enumerate() {
                let line = visible(line);
                let colour = if i == 0 {
                    "1"
                } else if line.starts_with(&format!("  [{}]", Severity::High.as_str())) {
                    "31"
                } else if line.starts_with(&format!("  [{}]", Severity::Medium.as_str())) {
                    "33"
                } else {
                    "0"
                };
                out::status(&paint(colour, &line));
            }
        }
        Err(why) => {
            out::error(&format!("the review could not be read: {why}; the answer above is all there is"));
        }
    }
    Ok(ed)
}
