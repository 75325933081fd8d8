//! `octo-eval`: scores octo (or another agent) on a suite of coding tasks. See the crate docs and
//! dev-docs/eval.md.

mod cli;
mod progress;
mod run;
mod shared;

use clap::Parser;
use cli::{Cli, Command};
use octo_eval::results::Results;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit code for bad arguments or files.
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("octo-eval: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = match cli.command {
        Command::Run(args) => runtime.block_on(run::run(args)),
        Command::Check { suite, only } => runtime.block_on(check(&suite, &only)),
        Command::Report { results, markdown } => report(&results, markdown.as_deref()),
        Command::Compare { a, b } => compare(&a, &b),
        Command::Chart { results, out } => chart(&results, &out),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("octo-eval: {e:#}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

fn report(path: &Path, markdown: Option<&Path>) -> anyhow::Result<ExitCode> {
    shared::print_summary(path, markdown)
}

fn compare(a: &Path, b: &Path) -> anyhow::Result<ExitCode> {
    let (ra, rb) = (Results::read(a)?, Results::read(b)?);
    if ra.header.suite_id != rb.header.suite_id {
        eprintln!("octo-eval: note: the two runs are of different suites; only tasks in both are compared");
    }
    let c = octo_eval::compare::Comparison::of(&ra, &rb);
    print!("{}", c.text(&ra.header.agent, &rb.header.agent));
    Ok(ExitCode::SUCCESS)
}

fn chart(files: &[PathBuf], out: &Path) -> anyhow::Result<ExitCode> {
    let mut runs = Vec::new();
    for f in files {
        let r = Results::read(f)?;
        let s = octo_eval::report::summarize(r.records.values(), r.header.attempts as usize);
        runs.push((r.header.agent.clone(), s));
    }
    std::fs::write(out, octo_eval::chart::svg(&runs))?;
    eprintln!("octo-eval: wrote {}", out.display());
    Ok(ExitCode::SUCCESS)
}

/// Each task's own solution passes its hidden tests and its start does not.
async fn check(suite: &Path, only: &[String]) -> anyhow::Result<ExitCode> {
    let suite = shared::load_suite(suite, only)?;
    let work = tempfile::tempdir()?;
    let mut bad = 0;
    for task in &suite.tasks {
        match octo_eval::runner::check_task(task, work.path()).await {
            Ok(()) => println!("ok    {}", task.id),
            Err(why) => {
                bad += 1;
                println!("FAIL  {}: {why}", task.id);
            }
        }
    }
    Ok(if bad == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
