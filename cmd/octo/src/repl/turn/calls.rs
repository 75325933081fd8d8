//! How a turn's tool calls look in the terminal: the line a call ends with (a tick, its diff, why
//! it did not run, the tail of a command's output and what the sandbox refused), an approval's
//! preview, and a sub-agent's start and end.

use super::super::paint::paint;
use crate::out;
use crate::output::first_line;
use crate::sanitize::visible;
use octo_app::{OutputKind, ToolOutcome};

/// Prints a tool's diff output, coloured, at most 40 lines; returns whether the output is still
/// there (always, for the renderer's `event`).
fn print_diff(output: &str) -> bool {
    let output = visible(output);
    for (i, l) in output.lines().enumerate() {
        if i >= 40 {
            out::status(&format!("  … {} more lines", output.lines().count() - 40));
            break;
        }
        let colored = if l.starts_with('+') && !l.starts_with("+++") {
            paint("32", l)
        } else if l.starts_with('-') && !l.starts_with("---") {
            paint("31", l)
        } else {
            l.to_owned()
        };
        out::status(&format!("  {colored}"));
    }
    true
}

/// One indented line when a sub-agent starts and one when it ends; its own stream stays out of
/// the parent's.
pub(super) fn subagent_progress(p: &octo_app::subagents::SubagentProgress) {
    use octo_app::subagents::SubagentStep;
    match &p.step {
        SubagentStep::Start { description } => {
            out::status(&paint("2", &visible(&format!("  ↳ {} started: {description}", p.id))));
        }
        SubagentStep::End { ok, tool_calls } => {
            let how = if *ok { "done" } else { "ended without an answer" };
            out::status(&paint("2", &visible(&format!("  ↳ {} {how} · {tool_calls} tool call(s)", p.id))));
        }
        SubagentStep::Tool { .. } => {}
    }
}

/// An approval: what the call would do (the command and where it runs, the diff of an edit, the
/// head of a new file) before the question.
pub(super) fn show_request(request: &octo_app::ApprovalRequest) {
    let line = format!("? {} wants to {}: {}", request.tool, request.action, request.summary);
    out::status(&paint("33", &visible(&line)));
    if let Some(cwd) = &request.cwd {
        out::status(&paint("2", &visible(&format!("  in {cwd}"))));
    }
    if let Some(r) = &request.reason {
        out::status(&visible(&format!("  ({r})")));
    }
    if let Some(p) = &request.preview {
        match p.kind {
            OutputKind::Diff => {
                print_diff(&p.text);
            }
            _ => {
                // A command is shown whole (what is approved is what runs); a file's head is cut.
                let max = if request.editable.is_some() { usize::MAX } else { 40 };
                for l in visible(&p.text).lines().take(max) {
                    out::status(&paint("2", &format!("  {l}")));
                }
            }
        }
    }
}

/// How a tool call ended: its diff, a tick, or why it did not run.
pub(super) fn tool_end(
    name: &str,
    output: &str,
    outcome: ToolOutcome,
    duration_ms: u64,
    kind: OutputKind,
    tail: usize,
) {
    let (body, status) = split_status(output);
    match (outcome, kind) {
        (ToolOutcome::Ran, OutputKind::Diff) => {
            print_diff(output);
            return;
        }
        // The checklist was shown when it changed.
        (ToolOutcome::Ran, OutputKind::Todos) => return,
        (ToolOutcome::Ran, _) => {
            out::status(&paint("2", &visible(&format!("  ✓ {name} ({duration_ms} ms)"))));
        }
        (ToolOutcome::Failed, _) => {
            let how = status.map_or_else(|| first_line(body, 200), str::to_owned);
            out::status(&paint("31", &visible(&format!("  ✗ {name} failed: {how} ({duration_ms} ms)"))));
        }
        (other, _) => {
            out::status(&paint("31", &visible(&format!("  ✗ {name} [{other}]: {}", first_line(body, 200)))));
            return;
        }
    }
    let (lines, sandbox) = tail_of(body, if outcome == ToolOutcome::Failed { tail.max(6) } else { tail });
    for l in &lines {
        out::status(&paint("2", &visible(&format!("    {l}"))));
    }
    if let Some(what) = sandbox {
        out::status(&paint("33", &visible(&format!(
            "    ⛔ the OS sandbox likely stopped it: {what}. The model may run it again outside the sandbox (you will be asked), or set `sandbox` in config.toml"
        ))));
    }
}

/// A command's output and its closing status line (`[exit code 1]`, `[timed out …]`).
fn split_status(output: &str) -> (&str, Option<&str>) {
    let trimmed = output.trim_end();
    match trimmed.rsplit_once('\n') {
        Some((body, last))
            if last.starts_with('[')
                && last.ends_with(']')
                && !last.starts_with("[This may be the OS sandbox") =>
        {
            (body, Some(last.trim_matches(['[', ']'])))
        }
        _ => (trimmed, None),
    }
}

/// The last `n` lines of a tool's output (what the sandbox note says taken out), and what the
/// sandbox refused when the output says it is the likely cause.
fn tail_of(body: &str, n: usize) -> (Vec<String>, Option<String>) {
    let mut sandbox = None;
    let mut lines: Vec<&str> = Vec::new();
    for l in body.lines() {
        match l.strip_prefix("[This may be the OS sandbox: ") {
            Some(rest) => sandbox = rest.split(". If").next().map(str::to_owned),
            None => lines.push(l),
        }
    }
    while lines.last().is_some_and(|l| l.trim().is_empty() || l.starts_with("[exit code")) {
        lines.pop();
    }
    if lines.first() == Some(&"(no output)") {
        lines.clear();
    }
    let skip = lines.len().saturating_sub(n);
    let mut out: Vec<String> = Vec::new();
    if skip > 0 && n > 0 {
        out.push(format!("… {skip} more lines (Ctrl-O or /expand shows them)"));
    }
    out.extend(lines[skip..].iter().map(|l| first_line(l, 200)));
    (if n == 0 { Vec::new() } else { out }, sandbox)
}
