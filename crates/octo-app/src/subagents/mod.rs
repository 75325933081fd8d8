//! Sub-agents: the `task` tool runs a child agent with its own history and returns its final
//! answer. Children are of a named type (built-in `general` and `explore`, or a Claude Code-format
//! file in an `agents/` folder), run under limits (depth, how many at once, a turn cap), in the
//! foreground or the background, and never with more rights than their parent: every call of a
//! child goes through the parent's permission engine (its rules, its mode, an active skill's
//! scope), narrowed further by the child type's own tool list.

mod child;
mod record;
mod spawner;
mod tool;

use octo_agent::Sender;
use octo_skills::{AgentDef, Agents};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

pub use record::{
    ChildInfo, ChildModel, ChildState, SubagentProgress, SubagentStep, COST_FIELD, PROGRESS_UPDATE,
    TASK_TOOLS, USAGE_UPDATE,
};
pub use spawner::{LateAnswer, LateApprovals, Sidechains, Spawner, SpawnerParts};
pub use tool::tools;

/// The folders agent definitions are read from, in order (a later one wins per name).
pub(crate) fn roots(
    home: &crate::home::Home,
    workspace: &std::path::Path,
    user_home: Option<&std::path::Path>,
) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    if let Some(h) = user_home {
        out.push((h.join(".claude/agents"), "~/.claude/agents".to_owned()));
    }
    out.push((home.agents(), "~/.octo/agents".to_owned()));
    out.push((workspace.join(".claude/agents"), "project .claude/agents".to_owned()));
    out.push((workspace.join(".octo/agents"), "project .octo/agents".to_owned()));
    let mut seen = Vec::new();
    out.retain(|(d, _)| {
        let real = std::fs::canonicalize(d).unwrap_or_else(|_| d.clone());
        let fresh = !seen.contains(&real);
        seen.push(real);
        fresh
    });
    out
}

/// The built-in agent types.
pub(crate) fn builtin() -> Vec<AgentDef> {
    let def = |name: &str, description: &str, prompt: &str, tools: Option<Vec<String>>| AgentDef {
        name: name.to_owned(),
        description: description.to_owned(),
        tools,
        disallowed_tools: Vec::new(),
        model: None,
        permission_mode: None,
        max_turns: None,
        prompt: prompt.to_owned(),
        file: None,
        source: "built-in".to_owned(),
    };
    vec![
        def(
            "general",
            "A task of several steps (research, a change, a check), with your tools except starting agents.",
            "You are a sub-agent of octo, a coding agent. Do the task you are given with your tools, then answer with a concise report: what you found or changed (paths and line numbers), what you verified, and anything left undone. Your answer is all the requester sees.",
            None,
        ),
        def(
            "explore",
            "Read-only: finds where something is defined or used, how a feature works. Ask it a precise question.",
            "You are a read-only exploration sub-agent of octo, a coding agent. Search and read the code to answer the question you are given; you cannot change anything. Answer concisely with the facts found, citing path:line.",
            Some(vec!["@read-only".to_owned()]),
        ),
    ]
}

/// Senders for the agent types that name a model of their own: `lite` (the configured lite
/// model), `endpoint:model`, or a model of the session's endpoint. Claude Code's aliases map:
/// `inherit`, `sonnet` and `opus` run on the session's model, `haiku` on the lite model when
/// there is one. A model that cannot be used is a note; the type then runs on the session's.
pub(crate) fn models(
    agents: &Agents,
    config: &crate::config::Config,
    lite: Option<&Arc<dyn Sender>>,
    store: &dyn crate::credentials::CredentialStore,
    env: crate::config::EnvLookup<'_>,
    http: &octo_provider::HttpConfig,
    notes: &mut Vec<String>,
) -> HashMap<String, ChildModel> {
    let mut out = HashMap::new();
    // Claude Code's aliases name a family on the session's Anthropic endpoint.
    let session = crate::factory::resolve(config, None, store, env).ok();
    let anthropic = session
        .as_ref()
        .filter(|r| r.protocol == crate::config::Protocol::Anthropic)
        .map(|r| r.endpoint.clone());
    for def in agents.iter() {
        let Some(model) = def.model.as_deref().map(str::trim).filter(|m| !m.is_empty()) else { continue };
        let family = match (model, anthropic.as_deref()) {
            ("sonnet" | "opus" | "haiku", Some(ep)) => {
                Some(format!("{ep}:{}", crate::turn_models::family_model(model)))
            }
            _ => None,
        };
        match (model, family) {
            ("inherit", _) => {}
            (_, Some(m)) => match resolve_child(config, &m, store, env, http) {
                Ok(c) => {
                    out.insert(def.name.clone(), c);
                }
                Err(e) => notes.push(format!(
                    "the agent `{}` asks for `{model}` ({m}), which cannot be used ({e}); it runs on the session's model",
                    def.name
                )),
            },
            ("sonnet" | "opus", None) => notes.push(format!(
                "the agent `{}` asks for Claude's `{model}`; the session's endpoint is not Anthropic's, so it runs on the session's model",
                def.name
            )),
            ("lite" | "haiku", None) => {
                if let Some(l) = lite {
                    // Priced at the lite model's own rate when the catalog or config knows it.
                    let price = config
                        .lite_model
                        .as_ref()
                        .and_then(|m| crate::factory::resolve(config, Some(&m.value), store, env).ok())
                        .and_then(|r| r.model_info.price);
                    out.insert(def.name.clone(), ChildModel { sender: Arc::clone(l), price });
                }
            }
            (m, None) => match resolve_child(config, m, store, env, http) {
                Ok(c) => {
                    out.insert(def.name.clone(), c);
                }
                Err(e) => notes.push(format!(
                    "the agent `{}` asks for the model `{m}`, which cannot be used ({e}); it runs on the session's model",
                    def.name
                )),
            },
        }
    }
    out
}

/// The sender and price of the model `choice` (`endpoint:model` or a model of the session's
/// endpoint).
fn resolve_child(
    config: &crate::config::Config,
    choice: &str,
    store: &dyn crate::credentials::CredentialStore,
    env: crate::config::EnvLookup<'_>,
    http: &octo_provider::HttpConfig,
) -> Result<ChildModel, String> {
    let r = crate::factory::resolve(config, Some(choice), store, env).map_err(|e| e.to_string())?;
    let sender = crate::factory::build_sender(&r, http.clone()).map_err(|e| e.to_string())?;
    Ok(ChildModel { sender, price: r.model_info.price })
}
