//! `octo checkpoints list|diff|restore`: the turns' checkpoints of this workspace, outside the
//! REPL. `restore` puts the files back to before a turn (and every later turn of its session);
//! the conversation is left as it is (`/rewind` in the session goes back in both).

use crate::cli::{CheckpointsAction, Cli};
use crate::exit::{EXIT_ERROR, EXIT_USAGE};
use crate::out;
use crate::sanitize::visible;
use octo_app::session_store::checkpoint::{Checkpoint, CheckpointStore, RestoreAction};
use octo_app::Launcher;
use std::process::ExitCode;

/// Runs `octo checkpoints …`.
pub fn run(launcher: &Launcher, cli: &Cli, action: &CheckpointsAction) -> anyhow::Result<ExitCode> {
    let ws = launcher.workspace(cli.workspace.as_deref()).unwrap_or_default();
    let store = match CheckpointStore::open(&launcher.home().checkpoints(), &ws) {
        Ok(s) => s,
        Err(e) => {
            out::error(&visible(&e.to_string()));
            return Ok(ExitCode::from(EXIT_ERROR));
        }
    };
    let all = store.list(None)?;
    match action {
        CheckpointsAction::List => {
            if all.is_empty() {
                out::status(&visible(&format!("no checkpoints in {} yet", ws.display())));
            }
            let now = octo_app::session_store::now();
            let mut newest_first: Vec<&Checkpoint> = all.iter().collect();
            newest_first.sort_by_key(|c| std::cmp::Reverse((c.time, c.seq)));
            for c in newest_first {
                let n = c.changed.len();
                let s = if n == 1 { "" } else { "s" };
                let age = octo_app::session_store::age(c.time, now);
                out::stdout(&visible(&format!(
                    "{}:{}  {age:>8}  {n} file{s}  {}\n",
                    c.session, c.seq, c.prompt
                )));
            }
            Ok(ExitCode::SUCCESS)
        }
        CheckpointsAction::Diff { checkpoint } => match find(&all, checkpoint) {
            Ok(c) => {
                out::stdout(&visible(&store.diff(c)?));
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => usage(&e),
        },
        CheckpointsAction::Restore { checkpoint, force } => {
            let c = match find(&all, checkpoint) {
                Ok(c) => c,
                Err(e) => return usage(&e),
            };
            let from: Vec<Checkpoint> =
                all.iter().filter(|k| k.session == c.session && k.seq >= c.seq).cloned().collect();
            let plan = store.plan_restore(&c.session, &from)?;
            if plan.files.is_empty() {
                out::status("the files are already as they were before that turn");
                return Ok(ExitCode::SUCCESS);
            }
            let overwrite: Vec<String> =
                if *force { plan.files.iter().map(|f| f.path.clone()).collect() } else { Vec::new() };
            let report = store.restore(&plan, &overwrite);
            for p in &report.restored {
                let how = plan.files.iter().find(|f| &f.path == p).map_or("restored", |f| match f.action {
                    RestoreAction::Restore => "restored",
                    RestoreAction::Delete => "deleted",
                });
                out::status(&visible(&format!("{how} {p}")));
            }
            for (p, why) in &report.left {
                out::status(&visible(&format!("left {p}: {why}")));
            }
            for s in &plan.skipped {
                out::status(&visible(&format!("not checkpointed ({}): {}", s.why, s.path)));
            }
            if report.left.iter().any(|(_, why)| why.contains("changed after")) {
                out::status("files changed after the turn were left alone; --force overwrites them");
                return Ok(ExitCode::from(EXIT_ERROR));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn usage(message: &str) -> anyhow::Result<ExitCode> {
    out::error(&visible(message));
    Ok(ExitCode::from(EXIT_USAGE))
}

/// `N` (in the newest session that has checkpoints) or `SESSION:N` (a session id or its prefix).
fn find<'a>(all: &'a [Checkpoint], text: &str) -> Result<&'a Checkpoint, String> {
    let (session, seq) = match text.rsplit_once(':') {
        Some((s, n)) => (Some(s), n),
        None => (None, text),
    };
    let seq: u32 = seq.parse().map_err(|_| {
        format!("`{text}` is not a checkpoint: give N or SESSION:N (see `octo checkpoints list`)")
    })?;
    let newest = all.iter().max_by_key(|c| c.time).map(|c| c.session.clone());
    let session = match session {
        Some(s) => s.to_owned(),
        None => newest.ok_or("there are no checkpoints in this workspace yet")?,
    };
    all.iter()
        .find(|c| c.session.starts_with(&session) && c.seq == seq)
        .ok_or_else(|| format!("no checkpoint {seq} in session {session} (see `octo checkpoints list`)"))
}
