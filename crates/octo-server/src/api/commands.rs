//! Slash commands from the web: the shared vocabulary's commands whose reply is complete in
//! itself, and skills and custom commands (their `` !`…` `` steps run only when nothing needs a
//! yes, as in a headless run); the list the input's completion offers.

use super::error::{entry, err, ApiError, Body};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use octo_app::skills::Prepared;
use octo_app::Session;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;

/// The shared commands the server runs beyond those any front end can
/// ([`octo_app::commands::SELF_CONTAINED`]); the ones that need a terminal are not offered here,
/// and `/rewind` has its own route.
const ALSO: &[&str] = &["/clear", "/new", "/stop"];

/// Whether the server runs the shared command `name`.
pub fn offered(name: &str) -> bool {
    octo_app::commands::SELF_CONTAINED.contains(&name) || ALSO.contains(&name)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandLine {
    line: String,
}

/// `POST /api/sessions/{id}/command {"line": "/status"}`: a shared command run on the session;
/// the reply's kind and its lines.
pub async fn command(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Body(c): Body<CommandLine>,
) -> Result<Json<Value>, ApiError> {
    use octo_app::commands::{parse, Parsed};
    let e = entry(&state, &id)?;
    let cmd = match parse(&c.line) {
        Parsed::Command(cmd) if offered(cmd.name()) => cmd,
        Parsed::Command(cmd) => {
            return Err(err(StatusCode::BAD_REQUEST, format!("{} is not offered over the API", cmd.name())))
        }
        Parsed::Invalid(why) => return Err(err(StatusCode::BAD_REQUEST, why)),
        Parsed::Other(word, _) => {
            return Err(err(
                StatusCode::NOT_FOUND,
                format!(
                "{word} is not a command (a skill or custom command is sent as a prompt); /help lists them"
            ),
            ))
        }
        Parsed::Message => {
            return Err(err(StatusCode::BAD_REQUEST, "a command starts with `/`; send prompts to /prompt"))
        }
    };
    let name = cmd.name();
    let reply = e
        .session
        .command(state.hub.launcher(), cmd)
        .await
        .map_err(|x| err(StatusCode::BAD_REQUEST, x.to_string()))?;
    let lines = match &reply {
        octo_app::commands::Reply::Help(specs) => {
            specs.iter().filter(|c| offered(c.name)).map(|c| format!("{} — {}", c.usage, c.about)).collect()
        }
        other => other.lines(),
    };
    Ok(Json(json!({"command": name, "kind": reply.kind(), "lines": lines})))
}

/// `GET /api/sessions/{id}/commands`: what `/` completes to — the shared commands offered here,
/// then the skills and custom commands the user may invoke, each with its argument hint.
pub async fn list(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let e = entry(&state, &id)?;
    let mut out: Vec<Value> = octo_app::commands::COMMANDS
        .iter()
        .filter(|c| offered(c.name))
        .map(|c| {
            let hint = c.usage.split_once(' ').map(|(_, rest)| rest);
            json!({"name": c.name, "about": c.about, "hint": hint, "kind": "command"})
        })
        .collect();
    out.push(json!({"name": "/rewind", "about": "go back over turns (files, conversation or both): use a turn's Rewind button", "hint": null, "kind": "command"}));
    for skill in e.session.skills().iter().filter(|s| s.user_invocable) {
        out.push(json!({
            "name": format!("/{}", skill.name),
            "about": skill.description,
            "hint": skill.argument_hint,
            "kind": if matches!(skill.kind, octo_app::skill_files::Kind::Command) { "custom" } else { "skill" },
        }));
    }
    Ok(Json(Value::Array(out)))
}

/// `/name args` for a skill or custom command, prepared as the prompt it becomes; a step that
/// needs a yes stops it with a message saying how to allow it.
pub async fn invoke(session: &Session, word: &str, arg: &str) -> Result<Prepared, ApiError> {
    let name = word.trim_start_matches('/');
    let Some(invocation) = session.invoke(name, arg).await else {
        return Err(err(
            StatusCode::NOT_FOUND,
            format!("{word} is not a command, skill or custom command here; type / to see them"),
        ));
    };
    let invocation = invocation.map_err(|e| err(StatusCode::BAD_REQUEST, e.to_string()))?;
    if let Some(step) = invocation.questions().next() {
        return Err(err(
            StatusCode::CONFLICT,
            format!(
                "{word} would {}, which needs your yes ({}), and the web cannot ask before a skill starts: allow it \
                 with a permission rule, or run {word} in the REPL",
                step.action,
                step.ask.as_deref().unwrap_or("asks first")
            ),
        ));
    }
    session
        .finish_invocation_with(invocation, octo_app::CancellationToken::new())
        .await
        .map_err(|e| err(StatusCode::BAD_REQUEST, e.to_string()))
}
