//! The command line.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Score octo, or another agent, on coding tasks checked by hidden tests.
#[derive(Debug, Parser)]
#[command(
    name = "octo-eval",
    version,
    after_help = "octo's own settings apply (~/.octo/config.toml, its keys; OCTO_HOME, OCTO_MAX_ATTEMPTS). \
                  The suite's own tasks: eval/tasks (make eval ENDPOINT=… MODEL=…). See dev-docs/eval.md."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a suite: each task in a fresh copy, the agent in auto mode inside the sandbox, then
    /// the hidden tests; results appended to a JSON Lines file, a summary at the end.
    Run(RunArgs),
    /// Check a suite's own tasks without an agent: each start fails and each solution passes.
    Check {
        /// The suite's folder.
        #[arg(long)]
        suite: PathBuf,
        /// Only tasks whose id contains this (repeatable).
        #[arg(long)]
        only: Vec<String>,
    },
    /// Print the summary of a results file (and write it as Markdown).
    Report {
        /// The results file.
        results: PathBuf,
        /// Where the Markdown goes (default: beside the results, `.md`).
        #[arg(long)]
        markdown: Option<PathBuf>,
    },
    /// Compare two runs task by task, with a sign test.
    Compare {
        /// Run A's results.
        a: PathBuf,
        /// Run B's results.
        b: PathBuf,
    },
    /// Draw pass rates and cost of runs as an SVG chart.
    Chart {
        /// Results files, one bar group each.
        #[arg(required = true)]
        results: Vec<PathBuf>,
        /// The SVG file to write.
        #[arg(long, short = 'o')]
        out: PathBuf,
    },
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The suite's folder: octo's own tasks (task.toml) or a checkout of Aider's polyglot benchmark.
    #[arg(long)]
    pub suite: PathBuf,
    /// octo's endpoint (`anthropic`, `local`, a configured id; `id:model` too).
    #[arg(long)]
    pub endpoint: Option<String>,
    /// The model.
    #[arg(long, short = 'm')]
    pub model: Option<String>,
    /// Also score another agent's command line on the same tasks (repeatable): `{prompt}` (or
    /// `{prompt_file}`) and `{dir}` are filled in, shell-quoted; it runs in the task's folder in
    /// the sandbox, with the network on. Each agent gets its own results file (`RUN.octo.jsonl`,
    /// `RUN.cmd1.jsonl`) and the runs are compared at the end.
    #[arg(long, value_name = "TEMPLATE")]
    pub agent_cmd: Vec<String>,
    /// Do not score octo (only the --agent-cmd agents).
    #[arg(long)]
    pub no_octo: bool,
    /// Tasks at once.
    #[arg(short = 'j', long, default_value_t = 1)]
    pub jobs: usize,
    /// Attempts per task; each after the first sees the end of the failing test output.
    #[arg(long, default_value_t = 2)]
    pub attempts: u32,
    /// Model requests per attempt.
    #[arg(long, default_value_t = 30)]
    pub max_turns: u32,
    /// Seconds per task, all attempts together.
    #[arg(long, default_value_t = 600.0)]
    pub timeout: f64,
    /// USD per task.
    #[arg(long)]
    pub max_cost: Option<f64>,
    /// Only tasks whose id contains this (repeatable).
    #[arg(long)]
    pub only: Vec<String>,
    /// The results file (default: eval-results/run-<time>.jsonl); never overwritten.
    #[arg(long, short = 'o', conflicts_with = "resume")]
    pub out: Option<PathBuf>,
    /// Continue an interrupted run in its results file: scored tasks are kept, errors run again.
    #[arg(long, value_name = "RESULTS")]
    pub resume: Option<PathBuf>,
    /// Keep the tasks' folders (the agent's work and each verify copy).
    #[arg(long)]
    pub keep: bool,
}
