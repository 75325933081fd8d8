//! `/name args` in the REPL: each step that needs a yes is asked about, then the skill's or
//! command's prompt is built.

use super::editor::{read_line, Ed};
use crate::out;
use crate::sanitize::visible;
use octo_app::skills::Prepared;
use octo_app::Session;

/// Runs `name` (`/review`) with `arg`, asking about steps that need a yes. `None` when it did
/// not run (unknown, refused, declined or failed; the user was told).
pub(super) async fn run(session: &Session, mut ed: Ed, name: &str, arg: &str) -> (Ed, Option<Prepared>) {
    let invocation = match session.skills().invoke(name.trim_start_matches('/'), arg).await {
        None => {
            let builtin: Vec<&str> = super::vocabulary::names().collect();
            out::error(&crate::invoke::unknown(session, name, &builtin));
            return (ed, None);
        }
        Some(Err(e)) => {
            out::error(&visible(&e.to_string()));
            return (ed, None);
        }
        Some(Ok(i)) => i,
    };
    let questions: Vec<_> = invocation.questions().cloned().collect();
    for step in questions {
        out::status(&visible(&format!(
            "octo: {name} wants to {} ({})",
            step.action,
            step.ask.as_deref().unwrap_or("asks first")
        )));
        let (e, answer) = read_line(ed, "  allow? [y/N] ").await;
        ed = e;
        if !matches!(answer.unwrap_or_default().trim().to_ascii_lowercase().as_str(), "y" | "yes") {
            out::status(&format!("  {name} not run"));
            return (ed, None);
        }
    }
    for step in &invocation.steps {
        out::status(&visible(&format!("  {name}: {}", step.action)));
    }
    // Ctrl-C stops the running step (its process group killed) and the command.
    let cancel = octo_app::CancellationToken::new();
    let finish = session.skills().finish_with(invocation, cancel.clone());
    tokio::pin!(finish);
    let result = loop {
        tokio::select! {
            r = &mut finish => break r,
            _ = tokio::signal::ctrl_c() => cancel.cancel(),
        }
    };
    match result {
        Ok(p) => {
            for n in &p.notes {
                out::status(&visible(&format!("octo: note: {n}")));
            }
            (ed, Some(p))
        }
        Err(e) => {
            out::error(&visible(&e.to_string()));
            (ed, None)
        }
    }
}
