//! Slash commands from the web: the shared commands the table offers a front end that can start
//! a conversation over and stop a turn by command (those that need a terminal or a yes first are
//! refused with the reason; `/rewind` is a turn's button), and skills and custom commands (their
//! `` !`…` `` steps run only when nothing needs a yes, as in a headless run); the list the
//! input's completion offers.

use super::error::{entry, err, ApiError, Body};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use octo_app::commands::{Capabilities, FrontEnd};
use octo_app::skills::Prepared;
use octo_app::Session;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;

/// The web UI and the API, as the command table sees them.
pub const FRONT: FrontEnd =
    FrontEnd::new("the web UI", Capabilities::START_OVER.and(Capabilities::STOP_BY_COMMAND));

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
    use octo_app::commands::Parsed;
    let e = entry(&state, &id)?;
    let cmd = match FRONT.read(&c.line) {
        Parsed::Command(cmd) => cmd,
        Parsed::Refused(why) | Parsed::Invalid(why) => return Err(err(StatusCode::BAD_REQUEST, why)),
        Parsed::Other(word, _) => {
            let skills = skill_names(&e.session);
            let is_skill = skills.iter().any(|s| s == word);
            return Err(err(
                StatusCode::NOT_FOUND,
                if is_skill {
                    format!("{word} is a skill or custom command: send it as a prompt")
                } else {
                    FRONT.unknown(word, skills.iter().map(String::as_str))
                },
            ));
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
        octo_app::commands::Reply::Help(_) => FRONT.help_lines(),
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
    let mut out: Vec<Value> = FRONT
        .offered()
        .map(|c| {
            let hint = c.usage.split_once(' ').map(|(_, rest)| rest);
            json!({"name": c.name, "about": c.about, "hint": hint, "kind": "command"})
        })
        .collect();
    out.push(json!({"name": "/rewind", "about": "go back over turns (files, conversation or both): use a turn's Rewind button", "hint": null, "kind": "command"}));
    for skill in e.session.skills().catalog().iter().filter(|s| s.user_invocable) {
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
/// needs a yes stops it with a message saying how to allow it (the web cannot ask before a skill
/// starts).
pub async fn invoke(session: &Session, word: &str, arg: &str) -> Result<Prepared, ApiError> {
    let cancel = octo_app::CancellationToken::new();
    match session.skills().invoke_unattended(word, arg, "before a skill starts in the web UI", cancel).await {
        None => Err(err(
            StatusCode::NOT_FOUND,
            FRONT.unknown(word, skill_names(session).iter().map(String::as_str)),
        )),
        Some(Ok(p)) => Ok(p),
        Some(Err(e @ octo_app::skills::InvokeError::NeedsYes { .. })) => {
            Err(err(StatusCode::CONFLICT, e.to_string()))
        }
        Some(Err(e)) => Err(err(StatusCode::BAD_REQUEST, e.to_string())),
    }
}

/// The names of the skills and custom commands the user may run, as `/name`.
fn skill_names(session: &Session) -> Vec<String> {
    session.skills().catalog().iter().filter(|s| s.user_invocable).map(|s| format!("/{}", s.name)).collect()
}
