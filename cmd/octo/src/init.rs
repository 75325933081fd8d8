//! `octo init [--write]`: the survey run headless; the proposed `AGENTS.md` is printed as a diff
//! and written only with `--write`.

use crate::cli::Cli;
use crate::exit::{runtime, EXIT_ERROR, EXIT_USAGE};
use crate::{launch, out};
use octo_app::init::InitError;
use std::process::ExitCode;

/// Runs the survey; writes the proposal with `write`.
pub fn run(cli: &Cli, write: bool) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(init(cli, write))
}

async fn init(cli: &Cli, write: bool) -> anyhow::Result<ExitCode> {
    let session = match launch::start_headless(cli) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    if !cli.quiet {
        out::status("octo: surveying the repository in plan mode…");
    }
    let proposal = octo_app::init::propose(&session).await;
    launch::finish(&session).await;
    let proposal = match proposal {
        Ok(p) => p,
        Err(e) => {
            out::error(&crate::sanitize::visible(&e.to_string()));
            let code = if matches!(e, InitError::Empty(_)) { EXIT_USAGE } else { EXIT_ERROR };
            return Ok(ExitCode::from(code));
        }
    };
    if proposal.before.as_deref() == Some(proposal.after.as_str()) {
        out::status("octo: AGENTS.md is already what the survey proposes; nothing to write");
        return Ok(ExitCode::SUCCESS);
    }
    out::stdout(&crate::sanitize::visible(&proposal.diff));
    if !write {
        out::status(&format!(
            "octo: not written; run `octo init --write` to write {}",
            proposal.path.display()
        ));
        return Ok(ExitCode::SUCCESS);
    }
    match octo_app::init::write(&session, &proposal) {
        Ok(()) => {
            out::status(&format!("octo: wrote {}", proposal.path.display()));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            out::error(&crate::sanitize::visible(&e.to_string()));
            Ok(ExitCode::from(EXIT_ERROR))
        }
    }
}
