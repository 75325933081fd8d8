//! `octo memory list|show|rm|dream`.

use crate::cli::{Cli, MemoryAction};
use crate::exit::{EXIT_ERROR, EXIT_USAGE};
use crate::out;
use crate::sanitize::visible;
use octo_app::Launcher;
use std::io::IsTerminal;
use std::process::ExitCode;

/// Runs `octo memory …`.
pub async fn run(launcher: &Launcher, cli: &Cli, action: &MemoryAction) -> anyhow::Result<ExitCode> {
    let ws = launcher.workspace(cli.workspace.as_deref())?;
    let memory = octo_app::memory::open(launcher.home(), &ws);
    match action {
        MemoryAction::List => {
            for store in [&memory.user, &memory.workspace] {
                let (entries, notices) = store.entries();
                let notes = store.scratch_count();
                out::status(&visible(&format!(
                    "{} memory: {} entr{}, {notes} scratch note{} (index {})",
                    store.label(),
                    entries.len(),
                    if entries.len() == 1 { "y" } else { "ies" },
                    if notes == 1 { "" } else { "s" },
                    store.index_path().display()
                )));
                for n in notices {
                    out::status(&visible(&format!("octo: note: {n}")));
                }
                for e in entries {
                    println!(
                        "{}",
                        visible(&format!(
                            "{}\t{}\t{}\t{}\t{}",
                            store.label(),
                            e.name,
                            e.kind.as_str(),
                            e.updated,
                            e.description
                        ))
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        MemoryAction::Show { name } => match memory.workspace.get(name).or_else(|| memory.user.get(name)) {
            Some(e) => {
                println!("{}", visible(&e.render()));
                Ok(ExitCode::SUCCESS)
            }
            None => {
                out::error(&visible(&format!("no memory `{name}` (octo memory list shows them)")));
                Ok(ExitCode::from(EXIT_USAGE))
            }
        },
        MemoryAction::Rm { name } => {
            for store in [&memory.workspace, &memory.user] {
                match store.delete(name) {
                    Ok(true) => {
                        out::status(&visible(&format!("deleted the {} memory `{name}`", store.label())));
                        return Ok(ExitCode::SUCCESS);
                    }
                    Ok(false) => {}
                    Err(e) => {
                        out::error(&visible(&e.to_string()));
                        return Ok(ExitCode::from(EXIT_ERROR));
                    }
                }
            }
            out::error(&visible(&format!("no memory `{name}` (octo memory list shows them)")));
            Ok(ExitCode::from(EXIT_USAGE))
        }
        MemoryAction::Dream { yes } => dream(launcher, cli, *yes).await,
    }
}

async fn dream(launcher: &Launcher, cli: &Cli, yes: bool) -> anyhow::Result<ExitCode> {
    let session = match crate::launch::start(launcher, cli, true, None) {
        Ok(s) => s,
        Err(e) => {
            out::error(&e.to_string());
            return Ok(ExitCode::from(crate::launch::exit_code(&e)));
        }
    };
    let plan = match session.memories().dream().await {
        Ok(p) => p,
        Err(e) => {
            out::error(&visible(&e.to_string()));
            return Ok(ExitCode::from(EXIT_ERROR));
        }
    };
    if plan.before.as_deref() == Some(plan.after.as_str()) {
        out::status("the dream changed nothing");
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", visible(&plan.diff));
    let write = yes || {
        if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
            eprint!("write this index (the old one goes to octo's trash)? [y/N] ");
            let mut answer = String::new();
            let _ = std::io::stdin().read_line(&mut answer);
            matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
        } else {
            out::status("not written: pass --yes to write without a terminal to ask on");
            false
        }
    };
    if !write {
        return Ok(ExitCode::SUCCESS);
    }
    match session.memories().apply_dream(&plan) {
        Ok(()) => {
            out::status(&visible(&format!(
                "wrote {} (undo: octo trash restore {})",
                plan.path.display(),
                plan.path.display()
            )));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            out::error(&visible(&e.to_string()));
            Ok(ExitCode::from(EXIT_ERROR))
        }
    }
}
