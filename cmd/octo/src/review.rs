//! `octo review`: the diff gathered by octo, reviewed by the model in plan mode, the findings
//! printed as a list or as JSON, and an exit status a CI step can use (`--fail-on`).

use crate::cli::{Cli, OutputFormat, SeverityArg};
use crate::exit::{runtime, EXIT_ERROR, EXIT_USAGE};
use crate::{launch, out};
use octo_app::review::{ReviewError, ReviewTarget, Severity};
use serde_json::json;
use std::process::ExitCode;

/// What `octo review` was asked for.
pub struct Args {
    pub base: Option<String>,
    pub commit: Option<String>,
    pub staged: bool,
    pub fail_on: Option<SeverityArg>,
}

/// Runs the review and reports it.
pub fn run(cli: &Cli, args: Args) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(review(cli, args))
}

async fn review(cli: &Cli, args: Args) -> anyhow::Result<ExitCode> {
    let target = match (args.base, args.commit, args.staged) {
        (Some(b), _, _) => ReviewTarget::Base(b),
        (None, Some(c), _) => ReviewTarget::Commit(c),
        (None, None, true) => ReviewTarget::Staged,
        (None, None, false) => ReviewTarget::WorkingTree,
    };
    let session = match launch::start_headless(cli) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let json_out = cli.output_format != OutputFormat::Text;
    if !cli.quiet && !json_out {
        out::status(&format!("octo: reviewing {} in plan mode…", target.describe()));
    }
    let outcome = octo_app::review::run(&session, &target).await;
    launch::finish(&session).await;
    let outcome = match outcome {
        Ok(Some(o)) => o,
        Ok(None) => {
            let said = format!("nothing to review: no changes in {}", target.describe());
            if json_out {
                out::stdout(&format!(
                    "{}\n",
                    json!({"type": "review", "status": "pass", "verdict": "approve", "findings": [], "nothing_to_review": true, "target": target.describe()})
                ));
            } else {
                out::status(&said);
            }
            return Ok(ExitCode::SUCCESS);
        }
        Err(e) => {
            out::error(&crate::sanitize::visible(&e.to_string()));
            let code = match e {
                ReviewError::NotARepository(_) | ReviewError::Git(_) | ReviewError::Usage(_) => EXIT_USAGE,
                _ => EXIT_ERROR,
            };
            return Ok(ExitCode::from(code));
        }
    };
    let level = args.fail_on.map(|l| match l {
        SeverityArg::High => Severity::High,
        SeverityArg::Medium => Severity::Medium,
        SeverityArg::Low => Severity::Low,
    });
    let status = match &outcome.review {
        Err(_) => "error",
        Ok(r) if level.is_some_and(|l| r.fails_at(l)) => "fail",
        Ok(_) => "pass",
    };
    if json_out {
        let (verdict, findings) = match &outcome.review {
            Ok(r) => (json!(r.verdict), json!(r.findings)),
            Err(_) => (serde_json::Value::Null, json!([])),
        };
        let s = &outcome.summary;
        out::stdout(&format!(
            "{}\n",
            json!({
                "type": "review",
                "status": status,
                "verdict": verdict,
                "findings": findings,
                "error": outcome.review.as_ref().err().map(ToString::to_string),
                "target": outcome.diff.description,
                "files": outcome.diff.files,
                "result": outcome.answer,
                "session_id": s.session_id,
                "total_cost_usd": s.cost_usd.unwrap_or(0.0),
                "usage": {"input_tokens": s.usage.input_tokens, "output_tokens": s.usage.output_tokens,
                          "cache_read_input_tokens": s.usage.cache_read_tokens,
                          "cache_creation_input_tokens": s.usage.cache_write_tokens},
            })
        ));
    } else {
        for line in octo_app::commands::review_lines(&outcome) {
            out::stdout(&format!("{}\n", crate::sanitize::visible(&line)));
        }
    }
    Ok(if status == "pass" { ExitCode::SUCCESS } else { ExitCode::from(EXIT_ERROR) })
}
