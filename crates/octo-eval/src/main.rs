//! `octo-eval`: scores octo (or another agent) on a suite of coding tasks. See the crate docs and
//! dev-docs/eval.md.

mod cli;
mod progress;

use clap::Parser;
use cli::{Cli, Command, RunArgs};
use octo_eval::agent::{Agent, Limits};
use octo_eval::results::{Header, Results, Writer};
use octo_eval::runner::{self, Plan};
use octo_eval::suite::Suite;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

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
        Command::Run(args) => runtime.block_on(run(args)),
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

fn load_suite(path: &Path, only: &[String]) -> anyhow::Result<Suite> {
    let mut suite = Suite::load(path)?;
    for (id, why) in &suite.skipped {
        eprintln!("octo-eval: skipped {id}: {why}");
    }
    suite.only(only);
    if suite.tasks.is_empty() {
        anyhow::bail!("no task of {} matches {}", suite.root.display(), only.join(", "));
    }
    Ok(suite)
}

async fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let suite = load_suite(&args.suite, &args.only)?;
    let agent = match &args.agent_cmd {
        Some(t) if !t.contains("{prompt}") && !t.contains("{prompt_file}") => {
            anyhow::bail!("--agent-cmd needs {{prompt}} or {{prompt_file}} where the task's prompt goes")
        }
        Some(t) => Agent::Command(t.clone()),
        None => Agent::Octo {
            launcher: Box::new(octo_app::Launcher::from_env()),
            endpoint: args.endpoint.clone(),
            model: args.model.clone(),
        },
    };
    if args.attempts == 0 || args.jobs == 0 {
        anyhow::bail!("--attempts and -j must be at least 1");
    }
    if args.max_cost.is_some_and(|c| c.is_nan() || c <= 0.0) {
        anyhow::bail!("--max-cost must be a positive number of USD");
    }
    let (writer, done, path) = open_results(&args, &suite, &agent)?;
    let tasks: Vec<_> = suite.tasks.iter().filter(|t| !done.contains(&t.id)).cloned().collect();
    if !done.is_empty() {
        eprintln!(
            "octo-eval: {} task(s) already scored in {}; running {}",
            done.len(),
            path.display(),
            tasks.len()
        );
    }
    let work_parent = path.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let work = runner::work_dir(&work_parent.join(".octo-eval-work"))?;
    let limits =
        Limits { max_turns: args.max_turns, wall: runner::secs(args.timeout), max_cost: args.max_cost };
    let plan = Arc::new(Plan {
        agent,
        attempts: args.attempts,
        jobs: args.jobs,
        limits,
        work: work.path().to_path_buf(),
    });
    let progress = Arc::new(progress::Bar::new(tasks.len(), args.attempts));
    let writer = Arc::new(Mutex::new(writer));
    tokio::select! {
        _ = runner::run_all(plan, tasks, writer, progress.clone()) => progress.done(),
        _ = tokio::signal::ctrl_c() => {
            progress.done();
            eprintln!("octo-eval: interrupted; what finished is in {}; continue with --resume {}", path.display(), path.display());
            return Ok(ExitCode::from(130));
        }
    }
    if args.keep {
        let kept = work.keep();
        eprintln!("octo-eval: the tasks' folders are kept in {}", kept.display());
    }
    print_summary(&path, None)
}

/// The results file to write and the tasks it has scored already.
fn open_results(
    args: &RunArgs,
    suite: &Suite,
    agent: &Agent,
) -> anyhow::Result<(Writer, std::collections::BTreeSet<String>, PathBuf)> {
    if let Some(path) = &args.resume {
        let (w, read) = Writer::resume(path, &suite.fingerprint())?;
        let done = read.done().map(str::to_owned).collect();
        return Ok((w, done, path.clone()));
    }
    let started =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let path = args.out.clone().unwrap_or_else(|| PathBuf::from(format!("eval-results/run-{started}.jsonl")));
    let header = Header {
        kind: "run".into(),
        suite_id: suite.fingerprint(),
        suite: suite.root.display().to_string(),
        agent: agent.label(),
        attempts: args.attempts,
        started,
    };
    Ok((Writer::create(&path, &header)?, Default::default(), path))
}

fn print_summary(path: &Path, markdown: Option<&Path>) -> anyhow::Result<ExitCode> {
    let read = Results::read(path)?;
    let summary = octo_eval::report::summarize(read.records.values(), read.header.attempts as usize);
    println!("{}\n{}", read.header.agent, summary.table());
    let md = markdown.map_or_else(|| path.with_extension("md"), Path::to_path_buf);
    let title = format!("{} on {}", read.header.agent, read.header.suite);
    std::fs::write(&md, summary.markdown(&title, read.records.values()))?;
    eprintln!("octo-eval: results in {}, summary in {}", path.display(), md.display());
    Ok(ExitCode::SUCCESS)
}

fn report(path: &Path, markdown: Option<&Path>) -> anyhow::Result<ExitCode> {
    print_summary(path, markdown)
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
    let suite = load_suite(suite, only)?;
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
