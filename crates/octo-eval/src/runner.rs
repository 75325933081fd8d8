//! A run: every task of the suite (those a resumed file has not scored), `jobs` at once, each in
//! its own folder under the run's work folder: the agent's attempts, each verified in a copy with
//! the hidden tests; on a failure the next attempt is given the end of the test output, as
//! Aider's harness does. Records are appended as tasks finish.

use crate::agent::{Agent, Limits, Stats};
use crate::results::{Attempt, Record, Writer};
use crate::task::Task;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// The test output a next attempt is shown, at most.
pub const FEEDBACK_BYTES: usize = 4096;

/// How a run is made.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Who is scored.
    pub agent: Agent,
    /// Attempts per task.
    pub attempts: u32,
    /// Tasks at once.
    pub jobs: usize,
    /// Per-task limits.
    pub limits: Limits,
    /// Where the tasks' folders go.
    pub work: PathBuf,
}

/// What the run reports as it goes.
pub trait Progress: Send + Sync {
    /// A task started.
    fn started(&self, task: &Task);
    /// A task ended.
    fn finished(&self, record: &Record);
}

/// The next attempt's prompt after a failure.
pub fn feedback(output: &str) -> String {
    format!(
        "The hidden tests still fail after your changes. The end of their output:\n\n```\n{}\n```\n\n\
         Change the code so that they pass; the tests themselves are not yours to change.",
        crate::verify::tail(output.trim_end(), FEEDBACK_BYTES)
    )
}

/// A folder name for a task id.
fn slug(id: &str) -> String {
    id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

/// Runs one task to its record.
pub async fn run_task(plan: &Plan, task: &Task) -> Record {
    let started = Instant::now();
    let deadline = started + plan.limits.wall;
    let base = plan.work.join(slug(&task.id));
    let work = base.join("work");
    let mut record = Record {
        kind: "task".into(),
        task: task.id.clone(),
        language: task.language.clone(),
        attempts: Vec::new(),
        passed: false,
        turns: None,
        tool_calls: None,
        tokens_in: None,
        tokens_out: None,
        tokens_cached: None,
        cost_usd: None,
        wall_secs: 0.0,
        error_kind: None,
        error: None,
    };
    let fail = |mut r: Record, kind: &str, why: String| {
        r.error_kind = Some(kind.to_owned());
        r.error = Some(why);
        r.wall_secs = started.elapsed().as_secs_f64();
        r
    };
    if let Err(e) = std::fs::create_dir_all(&base).and_then(|()| crate::workdir::prepare(task, &work)) {
        return fail(record, "setup", format!("cannot copy the task: {e}"));
    }
    let mut run = match plan.agent.begin(&work, &plan.limits) {
        Ok(r) => r,
        Err((kind, why)) => return fail(record, &kind, why),
    };
    let mut prompt = task.prompt.clone();
    for n in 1..=plan.attempts.max(1) {
        let step = run.attempt(&prompt, deadline).await;
        if let Some((kind, why)) = step.error {
            run.end();
            return with_stats(fail(record, &kind, why), run.stats());
        }
        let check = base.join(format!("verify-{n}"));
        let verified = match crate::workdir::verify_copy(task, &work, &check) {
            Ok(()) => {
                crate::verify::run(
                    &task.verify,
                    &check,
                    task.verify_limit,
                    &base.join(format!("verify-{n}.log")),
                )
                .await
            }
            Err(e) => Err(e),
        };
        let ran = match verified {
            Ok(r) => r,
            Err(e) => {
                run.end();
                return with_stats(
                    fail(record, "setup", format!("cannot run the verify command: {e}")),
                    run.stats(),
                );
            }
        };
        let verify =
            if ran.timed_out { format!("verify {} (its limit)", ran.ending) } else { ran.ending.clone() };
        record.attempts.push(Attempt {
            passed: ran.ok,
            verify: format!("agent: {}; verify: {verify}", step.end),
            output_tail: crate::verify::tail(&ran.output, FEEDBACK_BYTES),
        });
        if ran.ok {
            record.passed = true;
            break;
        }
        if Instant::now() >= deadline {
            break;
        }
        prompt = feedback(&ran.output);
    }
    run.end();
    record.wall_secs = started.elapsed().as_secs_f64();
    with_stats(record, run.stats())
}

fn with_stats(mut r: Record, stats: Option<Stats>) -> Record {
    if let Some(s) = stats {
        r.turns = Some(s.turns);
        r.tool_calls = Some(s.tool_calls);
        r.tokens_in = Some(s.tokens_in);
        r.tokens_out = Some(s.tokens_out);
        r.tokens_cached = Some(s.tokens_cached);
        r.cost_usd = s.cost_usd;
    }
    r
}

/// Runs `tasks`, `plan.jobs` at once, appending each record to `writer`; the records, in the
/// order they finished.
pub async fn run_all(
    plan: Arc<Plan>,
    tasks: Vec<Task>,
    writer: Arc<Mutex<Writer>>,
    progress: Arc<dyn Progress>,
) -> Vec<Record> {
    let gate = Arc::new(tokio::sync::Semaphore::new(plan.jobs.max(1)));
    let mut set = tokio::task::JoinSet::new();
    for task in tasks {
        // Taken here, in the suite's order, so tasks start in that order (one job: one by one).
        let permit = gate.clone().acquire_owned().await.ok();
        let (plan, writer, progress) = (plan.clone(), writer.clone(), progress.clone());
        set.spawn(async move {
            let _permit = permit;
            progress.started(&task);
            let record = run_task(&plan, &task).await;
            if let Ok(mut w) = writer.lock() {
                if let Err(e) = w.record(&record) {
                    eprintln!("octo-eval: {e}");
                }
            }
            progress.finished(&record);
            record
        });
    }
    let mut out = Vec::new();
    while let Some(done) = set.join_next().await {
        if let Ok(r) = done {
            out.push(r);
        }
    }
    out
}

/// The work folder of a run: under `dir`, removed when dropped unless kept.
pub fn work_dir(dir: &Path) -> std::io::Result<tempfile::TempDir> {
    std::fs::create_dir_all(dir)?;
    tempfile::Builder::new().prefix("work-").tempdir_in(dir)
}

/// Seconds as a short duration (`12.3 s`, `4 min`).
pub fn seconds(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.1} s")
    } else {
        format!("{:.0} min", s / 60.0)
    }
}

/// A limit given in seconds.
pub fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s.max(0.001))
}

/// Why a task of the suite does not check out.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// Nothing to check against.
    #[error("the task has no solution/ to check")]
    NoSolution,
    /// The task is solved before anyone works on it.
    #[error("its start already passes the hidden tests")]
    StartPasses,
    /// The reference solution does not pass.
    #[error("its solution fails ({ending}):\n{output}")]
    SolutionFails {
        /// How the verify command ended.
        ending: String,
        /// The end of its output.
        output: String,
    },
    /// The folders could not be made or the command not started.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Checks a task without an agent: its start fails the hidden tests and its solution passes.
pub async fn check_task(task: &Task, work: &Path) -> Result<(), CheckError> {
    if task.solution.is_empty() {
        return Err(CheckError::NoSolution);
    }
    let base = work.join(slug(&task.id));
    let verify = |name: &'static str, solved: bool| {
        let base = base.clone();
        async move {
            let dir = base.join(name);
            crate::workdir::prepare(task, &dir)?;
            if solved {
                crate::workdir::overlay(&task.solution, &dir)?;
            }
            let check = base.join(format!("{name}-verify"));
            crate::workdir::verify_copy(task, &dir, &check)?;
            let log = base.join(format!("{name}.log"));
            crate::verify::run(&task.verify, &check, task.verify_limit, &log).await
        }
    };
    if verify("start", false).await?.ok {
        return Err(CheckError::StartPasses);
    }
    let solved = verify("solved", true).await?;
    if !solved.ok {
        return Err(CheckError::SolutionFails {
            ending: solved.ending,
            output: crate::verify::tail(&solved.output, 1500),
        });
    }
    Ok(())
}
