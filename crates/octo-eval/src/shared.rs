//! What `run`, `report` and `check` share: reading the suite and printing a run's summary.

use octo_eval::results::Results;
use octo_eval::suite::Suite;
use std::path::Path;
use std::process::ExitCode;

/// The suite at `path` (its skipped folders named), narrowed to `only`.
pub(crate) fn load_suite(path: &Path, only: &[String]) -> anyhow::Result<Suite> {
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

/// Prints the summary of the results in `path` and writes it as Markdown.
pub(crate) fn print_summary(path: &Path, markdown: Option<&Path>) -> anyhow::Result<ExitCode> {
    let read = Results::read(path)?;
    let summary = octo_eval::report::summarize(read.records.values(), read.header.attempts as usize);
    println!("{}\n{}", read.header.agent, summary.table());
    let md = markdown.map_or_else(|| path.with_extension("md"), Path::to_path_buf);
    let title = format!("{} on {}", read.header.agent, read.header.suite);
    std::fs::write(&md, summary.markdown(&title, read.records.values()))?;
    eprintln!("octo-eval: results in {}, summary in {}", path.display(), md.display());
    Ok(ExitCode::SUCCESS)
}
