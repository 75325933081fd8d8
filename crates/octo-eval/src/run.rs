//! `octo-eval run`: octo and any `--agent-cmd` agents scored on the same tasks, one after the
//! other, each into its own results file; with several, their comparison at the end.

use crate::cli::RunArgs;
use octo_eval::agent::{Agent, Limits};
use octo_eval::results::{Header, Results, Writer};
use octo_eval::runner::{self, Plan};
use octo_eval::suite::Suite;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

/// Who is scored: octo unless `--no-octo`, then each `--agent-cmd`; a short tag for each.
fn agents(args: &RunArgs) -> anyhow::Result<Vec<(String, Agent)>> {
    let mut out = Vec::new();
    if !args.no_octo {
        let launcher = Box::new(octo_app::Launcher::from_env());
        out.push((
            "octo".to_owned(),
            Agent::Octo { launcher, endpoint: args.endpoint.clone(), model: args.model.clone() },
        ));
    }
    for (i, t) in args.agent_cmd.iter().enumerate() {
        if !t.contains("{prompt}") && !t.contains("{prompt_file}") {
            anyhow::bail!(
                "--agent-cmd `{t}` needs {{prompt}} or {{prompt_file}} where the task's prompt goes"
            );
        }
        out.push((format!("cmd{}", i + 1), Agent::Command(t.clone())));
    }
    if out.is_empty() {
        anyhow::bail!("nothing to score: --no-octo needs at least one --agent-cmd");
    }
    if out.len() > 1 && args.resume.is_some() {
        anyhow::bail!("--resume continues one agent's run: give its results file with that agent only");
    }
    Ok(out)
}

/// Runs the suite for every agent; prints each summary, and with several how each compares
/// with the first.
pub async fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let suite = crate::shared::load_suite(&args.suite, &args.only)?;
    if args.attempts == 0 || args.jobs == 0 {
        anyhow::bail!("--attempts and -j must be at least 1");
    }
    if args.max_cost.is_some_and(|c| c.is_nan() || c <= 0.0) {
        anyhow::bail!("--max-cost must be a positive number of USD");
    }
    let agents = agents(&args)?;
    let started =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let base = args.out.clone().unwrap_or_else(|| PathBuf::from(format!("eval-results/run-{started}.jsonl")));
    let mut files = Vec::new();
    for (tag, agent) in &agents {
        let path = match (&args.resume, agents.len()) {
            (Some(r), _) => r.clone(),
            (None, 1) => base.clone(),
            (None, _) => tagged(&base, tag),
        };
        if let Some(code) = run_agent(&args, &suite, agent, &path, started).await? {
            return Ok(code);
        }
        crate::shared::print_summary(&path, None)?;
        files.push(path);
    }
    if let [first, rest @ ..] = files.as_slice() {
        let a = Results::read(first)?;
        for other in rest {
            let b = Results::read(other)?;
            let c = octo_eval::compare::Comparison::of(&a, &b);
            println!("\n{}", c.text(&a.header.agent, &b.header.agent));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `run.jsonl` with `tag`: `run.octo.jsonl`.
fn tagged(base: &Path, tag: &str) -> PathBuf {
    let stem = base.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "run".into());
    base.with_file_name(format!("{stem}.{tag}.jsonl"))
}

/// One agent's run into `path`; an exit code when it was interrupted.
async fn run_agent(
    args: &RunArgs,
    suite: &Suite,
    agent: &Agent,
    path: &Path,
    started: u64,
) -> anyhow::Result<Option<ExitCode>> {
    let (writer, done) = open_results(args, suite, agent, path, started)?;
    let tasks: Vec<_> = suite.tasks.iter().filter(|t| !done.contains(&t.id)).cloned().collect();
    if !done.is_empty() {
        eprintln!(
            "octo-eval: {} task(s) already scored in {}; running {}",
            done.len(),
            path.display(),
            tasks.len()
        );
    }
    eprintln!("octo-eval: scoring {} on {} task(s)", agent.label(), tasks.len());
    // Under octo's home: outside any repository whose files or git would reach the agent.
    let work = runner::work_dir(&octo_app::config::octo_home().join("eval-work"))?;
    let limits =
        Limits { max_turns: args.max_turns, wall: runner::secs(args.timeout), max_cost: args.max_cost };
    let plan = Arc::new(Plan {
        agent: agent.clone(),
        attempts: args.attempts,
        jobs: args.jobs,
        limits,
        work: work.path().to_path_buf(),
    });
    let progress = Arc::new(crate::progress::Bar::new(tasks.len(), args.attempts));
    let writer = Arc::new(Mutex::new(writer));
    tokio::select! {
        _ = runner::run_all(plan, tasks, writer, progress.clone()) => progress.done(),
        _ = tokio::signal::ctrl_c() => {
            progress.done();
            eprintln!("octo-eval: interrupted; what finished is in {0}; continue with --resume {0}", path.display());
            return Ok(Some(ExitCode::from(130)));
        }
    }
    if args.keep {
        let kept = work.keep();
        eprintln!("octo-eval: the tasks' folders are kept in {}", kept.display());
    }
    Ok(None)
}

/// The results file to write and the tasks it has scored already.
fn open_results(
    args: &RunArgs,
    suite: &Suite,
    agent: &Agent,
    path: &Path,
    started: u64,
) -> anyhow::Result<(Writer, BTreeSet<String>)> {
    if args.resume.is_some() {
        let (w, read) = Writer::resume(path, &suite.fingerprint())?;
        return Ok((w, read.done().map(str::to_owned).collect()));
    }
    let header = Header {
        kind: "run".into(),
        suite_id: suite.fingerprint(),
        suite: suite.root.display().to_string(),
        agent: agent.label(),
        attempts: args.attempts,
        started,
    };
    Ok((Writer::create(path, &header)?, BTreeSet::new()))
}
