//! What would have let a refused call run: the flag or the permission rule to add, written for
//! the call's kind (a command, a path, a URL), so a headless run can end by saying it.

use octo_agent::{Access, Subject, ToolMeta, ToolOutcome};

/// How the user could allow a call of `tool` (described by `meta`) whose one-line summary is
/// `summary` (the command, path or URL), after it ended with `outcome`.
pub fn allow_hint(tool: &str, meta: Option<&ToolMeta>, summary: &str, outcome: ToolOutcome) -> String {
    let rule_name = meta.and_then(|m| m.rule_name.clone()).unwrap_or_else(|| tool.to_owned());
    match outcome {
        ToolOutcome::BlockedByPlanMode => return "leave plan mode (--permission-mode default)".to_owned(),
        ToolOutcome::DeniedByRule => {
            return "a deny rule or an active skill's allowed-tools refused it".to_owned()
        }
        ToolOutcome::HardDenied => return "octo never runs this, whatever the rules say".to_owned(),
        _ => {}
    }
    let rule = match meta.map(|m| &m.subject) {
        Some(Subject::Command { .. }) => {
            let first = summary.split_whitespace().next().unwrap_or_default();
            format!("{rule_name}({first}*)")
        }
        Some(Subject::Url { .. }) => {
            let host =
                summary.split("://").nth(1).and_then(|r| r.split(['/', ':', '?']).next()).unwrap_or(summary);
            format!("{rule_name}({host})")
        }
        Some(Subject::Path { .. }) if !summary.is_empty() => format!("{rule_name}({summary})"),
        _ => rule_name,
    };
    let mode = match meta.map(|m| &m.subject) {
        Some(Subject::Path { access: Access::Write, .. }) => "--permission-mode accept-edits, or ",
        _ => "",
    };
    format!("{mode}allow = [\"{rule}\"] in [permissions] (or run it on a terminal to be asked)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_fit_the_kind_of_call() {
        let cmd = ToolMeta::writes().subject(Subject::command("command"));
        assert!(allow_hint("terminal", Some(&cmd), "pytest -q", ToolOutcome::DeniedUnattended)
            .contains("allow = [\"terminal(pytest*)\"]"));
        let edit = ToolMeta::writes().subject(Subject::path("path", Access::Write));
        let h = allow_hint("edit_file", Some(&edit), "calc/__init__.py", ToolOutcome::DeniedUnattended);
        assert!(
            h.starts_with("--permission-mode accept-edits") && h.contains("edit_file(calc/__init__.py)"),
            "{h}"
        );
        let url = ToolMeta::reads().subject(Subject::url("url"));
        assert!(allow_hint("web_fetch", Some(&url), "https://docs.rs/x", ToolOutcome::DeniedUnattended)
            .contains("web_fetch(docs.rs)"));
        assert!(allow_hint("x", None, "", ToolOutcome::BlockedByPlanMode).contains("plan mode"));
    }
}
