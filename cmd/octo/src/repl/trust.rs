//! What a project brings that must not run on its own — MCP servers, hooks, granting skills and
//! commands, Claude Code settings — asked about once as the REPL opens; a yes is remembered for
//! those exact files.

use super::editor::{read_line, Ed};
use crate::out;
use crate::sanitize::visible;
use octo_app::Session;

/// Asks about each MCP server the project configures and the user has not approved yet: a
/// repository must not start programs on its own. A yes is remembered for that exact command.
pub(super) async fn approve_project_servers(session: &Session, mut ed: Ed) -> Ed {
    for s in session.servers().mcp().into_iter().filter(|s| s.state == "needs approval") {
        let from = match s.origin {
            octo_app::McpOrigin::ProjectJson => ".mcp.json",
            _ => ".octo/config.toml",
        };
        out::status(&visible(&format!(
            "octo: this project's {from} configures the MCP server `{}`, which runs: {}",
            s.name, s.target
        )));
        if !s.definition.is_empty() {
            out::status(&visible(&format!("  with {}", s.definition)));
        }
        let (e, answer) = read_line(
            ed,
            "  start it (and remember this for this exact definition, in this workspace)? [y/N] ",
        )
        .await;
        ed = e;
        if matches!(answer.unwrap_or_default().trim().to_ascii_lowercase().as_str(), "y" | "yes") {
            match session.servers().approve_mcp(&s.name) {
                Ok(()) => out::status(&visible(&format!(
                    "  starting `{}`; its tools join before your next message",
                    s.name
                ))),
                Err(e) => out::error(&visible(&e.to_string())),
            }
        } else {
            out::status(&visible(&format!("  `{}` stays off", s.name)));
        }
    }
    ed
}

/// Asks once whether to run the hooks this project configures (a repository must not run
/// programs on its own); a yes is remembered for these exact hooks.
pub(super) async fn trust_project_hooks(session: &Session, ed: Ed) -> Ed {
    let hooks = session.trust().untrusted_hooks();
    if hooks.is_empty() {
        return ed;
    }
    out::status("octo: this project configures hooks, commands octo would run at its seats:");
    for h in &hooks {
        out::status(&visible(&format!("  {h}")));
    }
    let (ed, answer) = read_line(ed, "  run them (and remember this for these exact hooks)? [y/N] ").await;
    if matches!(answer.unwrap_or_default().trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        match session.trust().trust_hooks() {
            Ok(()) => out::status("  the project's hooks are on"),
            Err(e) => out::error(&visible(&e.to_string())),
        }
    } else {
        out::status("  the project's hooks stay off (your own hooks still run)");
    }
    ed
}

/// Asks once whether this project's skills and commands may grant the tools their
/// `allowed-tools` name (as the user's own do), then whether its Claude Code settings' allow rules
/// apply; a yes is remembered for these exact files.
pub(super) async fn trust_project_grants(session: &Session, ed: Ed) -> Ed {
    let ed = ask_trust(
        ed,
        &session.trust().untrusted_grants(),
        "this project's commands and skills would run these tools without asking while active:",
        ("  their calls are asked about as usual", "  the project's commands and skills grant their tools"),
        || session.trust().trust_grants(),
    )
    .await;
    ask_trust(
        ed,
        &session.trust().untrusted_settings(),
        "this project's Claude Code settings allow these without asking:",
        (
            "  they are not applied (its deny and ask rules are)",
            "  applied (a defaultMode from the next session on)",
        ),
        || session.trust().trust_settings(),
    )
    .await
}

/// Lists `lines` under `header` and asks whether to trust them; `trust` remembers the yes.
async fn ask_trust(
    ed: Ed,
    lines: &[String],
    header: &str,
    (no, yes): (&str, &str),
    trust: impl FnOnce() -> Result<(), octo_app::hooks::TrustError>,
) -> Ed {
    if lines.is_empty() {
        return ed;
    }
    out::status(&format!("octo: {header}"));
    for l in lines {
        out::status(&visible(&format!("  {l}")));
    }
    let (ed, answer) = read_line(ed, "  trust them (and remember this for these exact files)? [y/N] ").await;
    if matches!(answer.unwrap_or_default().trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        match trust() {
            Ok(()) => out::status(yes),
            Err(e) => out::error(&visible(&e.to_string())),
        }
    } else {
        out::status(no);
    }
    ed
}
