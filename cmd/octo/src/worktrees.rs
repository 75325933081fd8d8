//! `octo --worktree [NAME]` (the session works in a git worktree of its own, made or reused
//! first) and `octo worktrees list|remove NAME [--force]`.

use crate::cli::{Cli, WorktreesAction};
use crate::exit::{EXIT_ERROR, EXIT_USAGE};
use crate::out;
use crate::sanitize::visible;
use octo_app::worktree::{self, WorktreeError};
use octo_app::Launcher;
use std::path::PathBuf;
use std::process::ExitCode;

/// The folder the session starts from and the user's `worktree_dir`.
fn place(launcher: &Launcher, cli: &Cli) -> Result<(PathBuf, Option<PathBuf>), ExitCode> {
    let ws = launcher.workspace(cli.workspace.as_deref()).map_err(|e| {
        out::error(&e.to_string());
        ExitCode::from(crate::launch::exit_code(&e))
    })?;
    let config = launcher.config(&ws, &crate::launch::overrides(cli)).map_err(|e| {
        out::error(&visible(&e.to_string()));
        ExitCode::from(crate::launch::exit_code(&e))
    })?;
    Ok((ws, config.worktree_dir))
}

fn code_of(e: &WorktreeError) -> ExitCode {
    match e {
        WorktreeError::NotARepository(_) | WorktreeError::BadName(_) | WorktreeError::NoSuch { .. } => {
            ExitCode::from(EXIT_USAGE)
        }
        _ => ExitCode::from(EXIT_ERROR),
    }
}

/// Resolves `--worktree`: makes or reuses the worktree and points the session at it (as
/// `--workspace`); the exit code when that fails.
pub fn enter(launcher: &Launcher, cli: &mut Cli) -> Option<ExitCode> {
    let name = cli.worktree.take()?;
    let (ws, configured) = match place(launcher, cli) {
        Ok(p) => p,
        Err(code) => return Some(code),
    };
    match worktree::enter(&ws, Some(name.as_str()), configured.as_deref()) {
        Ok(e) => {
            let w = &e.worktree;
            let branch =
                w.branch.as_deref().map_or_else(|| "a detached HEAD".to_owned(), |b| format!("branch {b}"));
            if !cli.quiet {
                let verb = if e.created { "made" } else { "reusing" };
                out::status(&visible(&format!(
                    "octo: {verb} worktree {} ({branch}) at {}",
                    w.name,
                    w.path.display()
                )));
            }
            cli.workspace = Some(w.path.clone());
            None
        }
        Err(e) => {
            out::error(&visible(&e.to_string()));
            Some(code_of(&e))
        }
    }
}

/// Runs `octo worktrees …`.
pub fn run(launcher: &Launcher, cli: &Cli, action: &WorktreesAction) -> ExitCode {
    let (ws, configured) = match place(launcher, cli) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let done = match action {
        WorktreesAction::List => worktree::list(&ws, configured.as_deref()).map(|all| print_list(&all)),
        WorktreesAction::Remove { name, force } => worktree::remove(&ws, name, *force, configured.as_deref())
            .map(|w| {
                let kept = w.branch.map(|b| format!("; branch {b} is kept (git branch -D {b} deletes it)"));
                out::status(&visible(&format!(
                    "octo: removed worktree {} at {}{}",
                    w.name,
                    w.path.display(),
                    kept.unwrap_or_default()
                )));
            }),
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            out::error(&visible(&e.to_string()));
            code_of(&e)
        }
    }
}

fn print_list(all: &[worktree::Listed]) {
    if all.is_empty() {
        out::status("octo: no worktrees yet (octo --worktree NAME makes one)");
        return;
    }
    let width = all.iter().map(|l| l.worktree.name.len()).max().unwrap_or(0);
    for l in all {
        let w = &l.worktree;
        let state = match l.changes {
            Some(0) => "clean".to_owned(),
            Some(1) => "1 change".to_owned(),
            Some(n) => format!("{n} changes"),
            None => "missing".to_owned(),
        };
        let branch = w.branch.clone().unwrap_or_else(|| "(detached)".to_owned());
        out::stdout(&visible(&format!("{:<width$}  {branch}  {state}  {}\n", w.name, w.path.display())));
    }
}
