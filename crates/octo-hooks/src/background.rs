//! `async` hooks: run in the background, waited for by nobody, deciding nothing.

use crate::config::Event;
use crate::hooks::Hooks;
use crate::run::Ran;
use serde_json::Value;

impl Hooks {
    /// Runs an `async` hook without waiting for it: its answer decides nothing, its errors are
    /// shown. It is stopped with the session's other leftovers, or by its own timeout.
    pub(crate) fn in_background(&self, event: Event, hook: crate::config::Hook, input: Value) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else { return };
        let me = self.clone();
        rt.spawn(async move {
            let notice = |p: String| {
                (me.ctx.notice)(format!("the async {} hook `{}` {p}", event.as_str(), hook.command));
            };
            let after = match me.guard(event, &hook).await {
                Ok(after) => after,
                Err(ran) => return notice(ran.problem.unwrap_or_default()),
            };
            // The guard holds the session's commands still until the hook has read what it
            // runs; a hook nobody waits for gets a moment for that, not its whole run.
            let run = me.runner.run(&hook, &input);
            tokio::pin!(run);
            let ran = tokio::select! {
                ran = &mut run => ran,
                () = tokio::time::sleep(BACKGROUND_HOLD) => {
                    if let Some(why) = after.and_then(|check| check()) {
                        notice(why);
                    }
                    return notice_failure(run.await, notice);
                }
            };
            if let Some(why) = after.and_then(|check| check()) {
                notice(why);
            }
            notice_failure(ran, notice);
        });
    }
}

/// How long the guard holds the session's commands still for a hook nobody waits for (`async`):
/// long enough for it to read what it runs.
const BACKGROUND_HOLD: std::time::Duration = std::time::Duration::from_millis(500);

/// Shows an `async` hook's failure through `notice` (its answer decides nothing).
fn notice_failure(ran: Ran, notice: impl Fn(String)) {
    let problem = ran.problem.or_else(|| {
        (!matches!(ran.code, Some(0))).then(|| format!("failed (exit {})", ran.code.unwrap_or(-1)))
    });
    if let Some(p) = problem {
        notice(p);
    }
}
