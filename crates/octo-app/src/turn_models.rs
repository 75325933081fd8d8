//! The model a skill or command asks for (`model:` in its frontmatter, as Claude Code reads it):
//! Claude's aliases `sonnet`, `opus` and `haiku` pick that family on the session's endpoint when
//! it speaks Anthropic's protocol; `inherit`, an alias the endpoint has no family for, and a model
//! that cannot be used run on the session's model, with a notice; anything else is a model of
//! the session's endpoint or `endpoint:model`. Resolved once when the session starts (no request
//! is made); a turn started by `/name` then runs on that model and the session's comes back after.

use crate::config::{Config, EnvLookup, Protocol};
use crate::credentials::CredentialStore;
use octo_agent::Sender;
use octo_provider::{HttpConfig, ModelInfo};
use std::collections::HashMap;
use std::sync::Arc;

/// The current model of a Claude family alias (`sonnet` → `claude-sonnet-4-5`).
pub(crate) fn family_model(alias: &str) -> &'static str {
    match alias {
        "opus" => "claude-opus-4-5",
        "haiku" => "claude-haiku-4-5",
        _ => "claude-sonnet-4-5",
    }
}

/// A model one turn runs on.
#[derive(Clone)]
pub struct TurnModel {
    /// Its client.
    pub sender: Arc<dyn Sender>,
    /// `endpoint:model`.
    pub label: String,
    /// Its window and price.
    pub info: ModelInfo,
    /// Its output cap.
    pub max_tokens: Option<u32>,
}

impl std::fmt::Debug for TurnModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnModel").field("label", &self.label).finish_non_exhaustive()
    }
}

/// What `model` names on a session whose endpoint is `anthropic` (when it speaks Anthropic's
/// protocol): `Ok(None)` is the session's own model, `Err` a note why it is used instead.
pub(crate) fn choice(model: &str, anthropic: Option<&str>) -> Result<Option<String>, String> {
    match (model, anthropic) {
        ("inherit", _) => Ok(None),
        ("sonnet" | "opus" | "haiku", Some(ep)) => Ok(Some(format!("{ep}:{}", family_model(model)))),
        ("sonnet" | "opus" | "haiku", None) => Err(format!(
            "Claude's `{model}` has no model on the session's endpoint, which is not Anthropic's"
        )),
        (m, _) => Ok(Some(m.to_owned())),
    }
}

/// The models the catalog's entries ask for, by entry name; a note for each that runs on the
/// session's model instead.
pub(crate) fn for_catalog(
    catalog: &octo_skills::Catalog,
    config: &Config,
    store: &dyn CredentialStore,
    env: EnvLookup<'_>,
    http: &HttpConfig,
    notes: &mut Vec<String>,
) -> HashMap<String, Arc<TurnModel>> {
    let mut out = HashMap::new();
    let asking: Vec<(&str, &str)> = catalog
        .iter()
        .filter_map(|s| Some((s.name.as_str(), s.model.as_deref().map(str::trim).filter(|m| !m.is_empty())?)))
        .collect();
    if asking.is_empty() {
        return out;
    }
    let session = crate::factory::resolve(config, None, store, env).ok();
    let anthropic =
        session.as_ref().filter(|r| r.protocol == Protocol::Anthropic).map(|r| r.endpoint.clone());
    for (name, model) in asking {
        let spec = match choice(model, anthropic.as_deref()) {
            Ok(Some(spec)) => spec,
            Ok(None) => continue,
            Err(why) => {
                notes.push(format!("/{name} asks for `{model}`: {why}; it runs on the session's model"));
                continue;
            }
        };
        let built =
            crate::factory::resolve(config, Some(&spec), store, env).map_err(|e| e.to_string()).and_then(
                |r| Ok((crate::factory::build_sender(&r, http.clone()).map_err(|e| e.to_string())?, r)),
            );
        match built {
            Ok((sender, r)) => {
                let turn = TurnModel { sender, label: r.label(), info: r.model_info, max_tokens: r.max_tokens };
                out.insert(name.to_owned(), Arc::new(turn));
            }
            Err(e) => notes.push(format!(
                "/{name} asks for the model `{model}` ({spec}), which cannot be used ({e}); it runs on the session's model"
            )),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_pick_a_family_only_on_anthropics_protocol() {
        assert_eq!(choice("opus", Some("anthropic")), Ok(Some("anthropic:claude-opus-4-5".to_owned())));
        assert_eq!(choice("inherit", Some("anthropic")), Ok(None));
        assert!(choice("haiku", None).is_err());
        assert_eq!(choice("deepseek:deepseek-chat", None), Ok(Some("deepseek:deepseek-chat".to_owned())));
    }
}
