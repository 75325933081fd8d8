//! `octo trash list|restore|empty`: the previous contents of files octo's tools changed.

use crate::cli::{Cli, TrashAction};
use crate::exit::{EXIT_ERROR, EXIT_USAGE};
use crate::out;
use crate::sanitize::visible;
use octo_app::trash::{Change, Trash, Undo, UndoError};
use octo_app::Launcher;
use std::process::ExitCode;

/// `path` without `.` and `..` (as the file tools record paths).
fn lexical(path: &std::path::Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Runs `octo trash …`.
pub fn run(launcher: &Launcher, cli: &Cli, action: &TrashAction) -> anyhow::Result<ExitCode> {
    let trash = Trash::new(launcher.home().trash());
    let ws = launcher.workspace(cli.workspace.as_deref()).unwrap_or_default();
    match action {
        TrashAction::List { all } => {
            let now = octo_app::session_store::now();
            let mut changes = trash.changes();
            changes.reverse();
            changes.retain(|c| *all || c.path.starts_with(&ws));
            if changes.is_empty() {
                let where_ = if *all {
                    String::new()
                } else {
                    format!(" in {} (--all for every directory)", ws.display())
                };
                out::status(&format!("the trash holds no changes{where_}"));
            }
            for c in &changes {
                let (undo, unchanged) = trash.check(c);
                let what = match undo {
                    Undo::Restore => "edited ",
                    Undo::Delete => "created",
                };
                let note = if unchanged { "" } else { "  (changed since)" };
                let age = octo_app::session_store::age(c.time / 1000, now);
                out::stdout(&visible(&format!("{}  {age:>8}  {what}  {}{note}\n", c.id, c.path.display())));
            }
            Ok(ExitCode::SUCCESS)
        }
        TrashAction::Restore { what, force } => {
            let changes = trash.changes();
            let path = lexical(&ws.join(what));
            let found: Option<&Change> = changes
                .iter()
                .find(|c| c.id == *what)
                .or_else(|| changes.iter().rev().find(|c| c.path == path));
            let Some(change) = found else {
                out::error(&visible(&format!(
                    "the trash has no entry `{what}` (an id from `octo trash list`, or a changed file's path)"
                )));
                return Ok(ExitCode::from(EXIT_USAGE));
            };
            match trash.undo(change, *force, &ws) {
                Ok(Undo::Restore) => {
                    out::status(&visible(&format!(
                        "restored {} as it was before {}",
                        change.path.display(),
                        change.id
                    )));
                    Ok(ExitCode::SUCCESS)
                }
                Ok(Undo::Delete) => {
                    out::status(&visible(&format!(
                        "removed {} (octo had created it)",
                        change.path.display()
                    )));
                    Ok(ExitCode::SUCCESS)
                }
                Err(e @ UndoError::ChangedSince(_)) => {
                    out::error(&visible(&format!("{e}; add --force to overwrite it anyway")));
                    Ok(ExitCode::from(EXIT_ERROR))
                }
                Err(e) => {
                    out::error(&visible(&e.to_string()));
                    Ok(ExitCode::from(EXIT_ERROR))
                }
            }
        }
        TrashAction::Empty => {
            let n = trash.empty()?;
            out::status(&format!("emptied the trash ({n} files)"));
            Ok(ExitCode::SUCCESS)
        }
    }
}
