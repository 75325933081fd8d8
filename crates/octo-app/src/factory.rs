//! Turning configuration into a working model client: which endpoint and model, which key, which
//! adapter. Front ends never construct providers themselves.

use crate::config::{Config, EndpointConfig, EnvLookup, Protocol};
use crate::credentials::{resolve_key, CredentialStore, KeySource};
use octo_agent::Sender;
use octo_provider::{Catalog, EndpointSettings, HttpConfig, ModelInfo};
use octo_provider_anthropic::{AnthropicConfig, AnthropicSender};
use octo_provider_openai::{preset_by_id, OpenAiConfig, OpenAiSender, Preset};
use std::sync::Arc;
use thiserror::Error;

/// The endpoint used when no `anthropic` endpoint is configured.
const ANTHROPIC_DEFAULT_MODEL: &str = "claude-sonnet-4-5";

/// Built-in endpoints tried, in this order, when none is chosen: the first whose key is set wins.
const AUTO_ORDER: &[&str] = &[
    "anthropic",
    "openai",
    "gemini",
    "deepseek",
    "openrouter",
    "moonshot",
    "qwen",
    "glm",
    "zhipu",
    "xai",
    "groq",
];

/// Why no client could be built.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EndpointError {
    /// Nothing is configured and no known key is set.
    #[error("no model endpoint is configured.\n{0}")]
    NoEndpoint(String),
    /// The chosen endpoint does not exist.
    #[error("unknown endpoint `{id}`; known endpoints: {known}. Add it as [endpoints.{id}] in ~/.octo/config.toml")]
    UnknownEndpoint {
        /// The id asked for.
        id: String,
        /// The ids that exist.
        known: String,
    },
    /// The endpoint needs a key and none was found.
    #[error("no API key for endpoint `{endpoint}`: {hint}")]
    MissingKey {
        /// The endpoint.
        endpoint: String,
        /// How to provide one.
        hint: String,
    },
    /// The endpoint's settings are unusable (bad URL, header, proxy).
    #[error("endpoint `{endpoint}`: {message}")]
    Invalid {
        /// The endpoint.
        endpoint: String,
        /// What is wrong.
        message: String,
    },
}

/// How to configure an endpoint, for the `NoEndpoint` error: guided setup first, then the
/// recommended local model (in builds that have the engine), then a key or a server.
fn setup_help() -> String {
    let mut ways = vec![(
        "octo setup".to_owned(),
        "guided, on a terminal: the local model or a provider and key, tested before saving".to_owned(),
    )];
    #[cfg(feature = "local")]
    {
        let r = octo_provider_local::models::default_choice();
        ways.push((
            format!("octo models pull {}", r.name),
            format!(
                "a model that runs inside octo ({:.1} GB, {}): no key, no server",
                r.approx_bytes as f64 / 1e9,
                r.abilities()
            ),
        ));
    }
    ways.extend([
        (
            "export ANTHROPIC_API_KEY=sk-ant-...".to_owned(),
            "or OPENAI_API_KEY, DEEPSEEK_API_KEY, OPENROUTER_API_KEY, ...".to_owned(),
        ),
        ("octo auth set deepseek".to_owned(), "store a key in the OS keyring".to_owned()),
        (
            "octo --endpoint ollama --model qwen2.5-coder".to_owned(),
            "a local Ollama server, no key".to_owned(),
        ),
    ]);
    let mut out = String::from("Set one up in any of these ways:\n");
    for (cmd, why) in ways {
        out.push_str(&format!("  {cmd:<44} # {why}\n"));
    }
    out.push_str("or put a default in ~/.octo/config.toml:\n  default = \"deepseek:deepseek-chat\"");
    out
}

/// The local model's settings from its endpoint table.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LocalOptions {
    /// Context size in tokens.
    pub context_size: Option<u32>,
    /// CPU threads.
    pub threads: Option<usize>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Whether the model gets tools (`None`: by its size).
    pub tools: Option<bool>,
}

/// An endpoint and model, resolved and ready to build a client.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// Endpoint id.
    pub endpoint: String,
    /// Model id.
    pub model: String,
    /// Wire protocol.
    pub protocol: Protocol,
    /// Base URL.
    pub base_url: String,
    /// The key, when one was found (never printed).
    pub key: Option<String>,
    /// Where the key came from.
    pub key_source: Option<KeySource>,
    /// The environment variable for the key.
    pub key_env: Option<String>,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// Limits and price.
    pub model_info: ModelInfo,
    /// Output cap from the endpoint's config.
    pub max_tokens: Option<u32>,
    /// Notes for the user (an unavailable keyring).
    pub notes: Vec<String>,
    /// The endpoint's configured timeouts.
    pub timeouts: crate::config::Timeouts,
    /// Whether the configuration gives this model's context window (then it is trusted as is;
    /// otherwise a local server is asked).
    pub window_configured: bool,
    /// For `protocol = "local"`: how to run the model (its file is `base_url`).
    pub local: LocalOptions,
    preset: Option<&'static octo_provider_openai::Preset>,
    /// For `protocol = "responses"`: the vendor's preset (how the key is sent).
    responses: Option<&'static octo_provider_responses::Preset>,
}

impl Resolved {
    /// `endpoint:model`.
    pub fn label(&self) -> String {
        format!("{}:{}", self.endpoint, self.model)
    }

    /// How the key is sent to a Responses endpoint (a bearer token unless its preset says).
    pub(crate) fn auth(&self) -> octo_provider_responses::Auth {
        self.responses.map_or(octo_provider_responses::Auth::Bearer, |p| p.auth)
    }
}

fn builtin(id: &str) -> Option<EndpointConfig> {
    if id == "local" {
        return Some(EndpointConfig { protocol: Some(Protocol::Local), ..EndpointConfig::default() });
    }
    if id == "anthropic" {
        return Some(EndpointConfig { protocol: Some(Protocol::Anthropic), ..EndpointConfig::default() });
    }
    // OpenAI's own API, Azure's and OpenRouter's Responses endpoint speak the Responses API.
    if let Some(p) = octo_provider_responses::preset_by_id(id) {
        return Some(EndpointConfig {
            protocol: Some(Protocol::Responses),
            preset: Some(p.id.to_owned()),
            ..EndpointConfig::default()
        });
    }
    preset_by_id(id).filter(|p| p.id != "custom").map(|p| EndpointConfig {
        protocol: Some(Protocol::Openai),
        preset: Some(p.id.to_owned()),
        ..EndpointConfig::default()
    })
}

/// Every endpoint id known: configured ones and built-ins.
pub fn known_endpoints(config: &Config) -> Vec<String> {
    let mut ids: Vec<String> = config.endpoints.keys().cloned().collect();
    let openai = octo_provider_openai::PRESETS.iter().map(|p| p.id);
    let responses = octo_provider_responses::PRESETS.iter().map(|p| p.id);
    for b in ["anthropic", "local"].into_iter().chain(openai).chain(responses) {
        if b != "custom" && !ids.iter().any(|i| i == b) {
            ids.push(b.to_owned());
        }
    }
    ids
}

/// Resolves `choice` (`endpoint` or `endpoint:model`; `None` for the configured default) into an
/// endpoint, model and key.
pub fn resolve(
    config: &Config,
    choice: Option<&str>,
    store: &dyn CredentialStore,
    env: EnvLookup<'_>,
) -> Result<Resolved, EndpointError> {
    let choice = choice.map(str::to_owned).or_else(|| config.default.as_ref().map(|d| d.value.clone()));
    let Some(choice) = choice.or_else(|| auto_endpoint(config, store, env)) else {
        return local_fallback(config);
    };
    let (id, model) = match choice.split_once(':') {
        Some((e, m)) => (e.trim().to_owned(), Some(m.trim().to_owned()).filter(|m| !m.is_empty())),
        None => (choice.trim().to_owned(), None),
    };
    let ep =
        config.endpoints.get(&id).map(|s| s.value.clone()).or_else(|| builtin(&id)).ok_or_else(|| {
            EndpointError::UnknownEndpoint { id: id.clone(), known: known_endpoints(config).join(", ") }
        })?;
    if ep.protocol == Some(Protocol::Local) {
        return resolve_local(config, id, model, &ep);
    }
    let preset = ep.preset.as_deref().and_then(preset_by_id).or_else(|| preset_by_id(&id));
    let protocol = ep.protocol.unwrap_or(if id == "anthropic" || id.contains("anthropic") {
        Protocol::Anthropic
    } else {
        Protocol::Openai
    });
    let responses = (protocol == Protocol::Responses)
        .then(|| {
            ep.preset
                .as_deref()
                .and_then(octo_provider_responses::preset_by_id)
                .or_else(|| octo_provider_responses::preset_by_id(&id))
        })
        .flatten();
    let (model, base_url) = model_and_url(&id, &ep, protocol, (preset, responses), model)?;
    let env_var = key_env(&id, &ep);
    let mut notes = Vec::new();
    let found = resolve_key(store, &id, env_var.as_deref(), env, &mut notes);
    if found.is_none() && requires_key(protocol, (preset, responses), &ep, &base_url) {
        let hint = match &env_var {
            Some(v) => format!("set {v} or run `octo auth set {id}`"),
            None => format!("run `octo auth set {id}` or set `api_key_env` in [endpoints.{id}]"),
        };
        return Err(EndpointError::MissingKey { endpoint: id, hint });
    }
    let timeouts = ep
        .timeouts(&id)
        .map_err(|e| EndpointError::Invalid { endpoint: id.clone(), message: e.to_string() })?;
    let window_configured = ep.context_windows.contains_key(&model)
        || ep.model_info.get(&model).is_some_and(|o| o.context_window.is_some());
    let (key, key_source) = match found {
        Some((k, s)) => (Some(k), Some(s)),
        None => (None, None),
    };
    Ok(Resolved {
        model_info: catalog_of(&ep).info(&model),
        endpoint: id,
        model,
        protocol,
        base_url,
        key,
        key_source,
        key_env: env_var,
        headers: ep.headers.into_iter().collect(),
        max_tokens: ep.max_tokens.or(config.max_tokens.as_ref().map(|t| t.value)),
        notes,
        timeouts,
        window_configured,
        local: LocalOptions::default(),
        preset,
        responses,
    })
}

/// No endpoint chosen anywhere: the first of the usual ones whose key is at hand.
fn auto_endpoint(config: &Config, store: &dyn CredentialStore, env: EnvLookup<'_>) -> Option<String> {
    let mut notes = Vec::new();
    AUTO_ORDER
        .iter()
        .find(|id| {
            let ep = config.endpoints.get(**id).map(|s| s.value.clone()).or_else(|| builtin(id));
            ep.is_some_and(|ep| {
                resolve_key(store, id, key_env(id, &ep).as_deref(), env, &mut notes).is_some()
            })
        })
        .map(|id| (*id).to_owned())
}

/// The model (asked for, the endpoint's first, or the protocol's or preset's default) and the
/// base URL; an error names what to set when either is missing.
fn model_and_url(
    id: &str,
    ep: &EndpointConfig,
    protocol: Protocol,
    (preset, responses): (Option<&'static Preset>, Option<&'static octo_provider_responses::Preset>),
    model: Option<String>,
) -> Result<(String, String), EndpointError> {
    let model = model.or_else(|| ep.models.first().cloned()).unwrap_or_else(|| match protocol {
        Protocol::Anthropic => ANTHROPIC_DEFAULT_MODEL.to_owned(),
        Protocol::Responses => responses.map(|p| p.default_model.to_owned()).unwrap_or_default(),
        Protocol::Openai | Protocol::Local => preset.map(|p| p.default_model.to_owned()).unwrap_or_default(),
    });
    if model.is_empty() {
        return Err(EndpointError::Invalid {
            endpoint: id.to_owned(),
            message: format!(
                "no model given; use --model, `{id}:<model>`, or list `models` in [endpoints.{id}]"
            ),
        });
    }
    let base_url = ep.base_url.clone().unwrap_or_else(|| match protocol {
        Protocol::Anthropic => octo_provider_anthropic::DEFAULT_BASE_URL.to_owned(),
        Protocol::Responses => responses.map(|p| p.base_url.to_owned()).unwrap_or_default(),
        Protocol::Openai | Protocol::Local => preset.map(|p| p.base_url.to_owned()).unwrap_or_default(),
    });
    if base_url.is_empty() {
        return Err(EndpointError::Invalid {
            endpoint: id.to_owned(),
            message: format!("set `base_url` in [endpoints.{id}]"),
        });
    }
    Ok((model, base_url))
}

/// Whether the endpoint cannot work without a key (a local server usually needs none).
fn requires_key(
    protocol: Protocol,
    (preset, responses): (Option<&'static Preset>, Option<&'static octo_provider_responses::Preset>),
    ep: &EndpointConfig,
    base_url: &str,
) -> bool {
    match protocol {
        Protocol::Anthropic => base_url.contains("anthropic.com"),
        Protocol::Local => false,
        // A vendor's endpoint needs its key; a server of one's own (vLLM, llama.cpp) may not.
        Protocol::Responses => responses.is_some() || ep.api_key_env.is_some(),
        Protocol::Openai => {
            (preset.is_none_or(|p| p.requires_key) && ep.base_url.is_none()) || ep.api_key_env.is_some()
        }
    }
}

/// The model catalog with the endpoint's own windows and model facts applied.
fn catalog_of(ep: &EndpointConfig) -> Catalog {
    let mut catalog = Catalog::builtin();
    for (m, window) in &ep.context_windows {
        let mut info = catalog.info(m);
        info.context_window = *window;
        catalog.set(m.clone(), info);
    }
    for (m, o) in &ep.model_info {
        catalog.set(m.clone(), o.apply(catalog.info(m)));
    }
    catalog
}

/// Nothing configured and no key found: the pulled local model when there is one (said in a
/// note), else the error that says how to set one up.
fn local_fallback(config: &Config) -> Result<Resolved, EndpointError> {
    #[cfg(feature = "local")]
    {
        let dir = config.home.join("models");
        if let Some(m) = octo_provider_local::models::default_model(&dir) {
            let ep = config.endpoints.get("local").map(|s| s.value.clone()).unwrap_or_default();
            let mut r = resolve_local(config, "local".into(), Some(m.name.clone()), &ep)?;
            r.notes.push(format!(
                "no endpoint is configured and no API key was found: using the local model {} (set `default` in ~/.octo/config.toml to choose another)",
                m.name
            ));
            return Ok(r);
        }
        Err(EndpointError::NoEndpoint(setup_help()))
    }
    #[cfg(not(feature = "local"))]
    {
        let _ = config;
        Err(EndpointError::NoEndpoint(setup_help()))
    }
}

/// A `protocol = "local"` endpoint: the model by name or path (`--model`, the table's `file`, its
/// `models`, else the first pulled model), found in `~/.octo/models`.
#[cfg(feature = "local")]
fn resolve_local(
    config: &Config,
    id: String,
    model: Option<String>,
    ep: &EndpointConfig,
) -> Result<Resolved, EndpointError> {
    use octo_provider_local::models;
    let invalid = |message: String| EndpointError::Invalid { endpoint: id.clone(), message };
    let dir = config.home.join("models");
    let want = model
        .or_else(|| ep.file.clone())
        .or_else(|| ep.models.first().cloned())
        .or_else(|| models::default_model(&dir).map(|m| m.name))
        .ok_or_else(|| {
            invalid(format!(
                "no local model is installed. Pull one with `octo models pull {}`, or give a .gguf file with --model",
                models::RECOMMENDED[0].name
            ))
        })?;
    let path = models::resolve(&dir, &want).map_err(|e| invalid(e.to_string()))?;
    let window = u64::from(ep.context_size.unwrap_or(octo_provider_local::DEFAULT_CONTEXT));
    let zero = octo_provider::Price { input: 0.0, output: 0.0, cache_read: 0.0, cache_write: 0.0 };
    Ok(Resolved {
        endpoint: id,
        model: want,
        protocol: Protocol::Local,
        base_url: path.display().to_string(),
        key: None,
        key_source: None,
        key_env: None,
        headers: Vec::new(),
        model_info: ModelInfo { context_window: window, max_output: 2048, price: Some(zero) },
        max_tokens: ep.max_tokens.or(config.max_tokens.as_ref().map(|t| t.value)),
        notes: Vec::new(),
        timeouts: crate::config::Timeouts::default(),
        window_configured: false,
        local: LocalOptions {
            context_size: ep.context_size,
            threads: ep.threads,
            temperature: ep.temperature,
            tools: ep.tools,
        },
        preset: None,
        responses: None,
    })
}

/// A `protocol = "local"` endpoint in a build without the engine: an error that says so.
#[cfg(not(feature = "local"))]
fn resolve_local(
    _: &Config,
    id: String,
    _: Option<String>,
    _: &EndpointConfig,
) -> Result<Resolved, EndpointError> {
    Err(EndpointError::Invalid { endpoint: id, message: NO_LOCAL.into() })
}

/// Why a local endpoint cannot be used in a build without the engine.
#[cfg(not(feature = "local"))]
pub(crate) const NO_LOCAL: &str = "this octo was built without the local model engine (it needs cmake and libclang to build: install them, e.g. `apt install cmake clang libclang-dev`, and build again)";

fn key_env(id: &str, ep: &EndpointConfig) -> Option<String> {
    if let Some(v) = &ep.api_key_env {
        return Some(v.clone());
    }
    if id == "anthropic" || ep.protocol == Some(Protocol::Anthropic) && ep.base_url.is_none() {
        return Some("ANTHROPIC_API_KEY".into());
    }
    let env = [ep.preset.as_deref(), Some(id)].into_iter().flatten().find_map(|name| {
        preset_by_id(name)
            .map(|p| p.key_env)
            .or_else(|| octo_provider_responses::preset_by_id(name).map(|p| p.key_env))
    })?;
    (!env.is_empty()).then(|| env.to_owned())
}

impl Resolved {
    /// Where the user can put a key for this endpoint, in octo's words (for authentication errors).
    pub(crate) fn key_hint(&self) -> String {
        match &self.key_env {
            Some(v) => format!("set {v} or run `octo auth set {}`", self.endpoint),
            None => format!(
                "run `octo auth set {}` or set `api_key_env` in [endpoints.{}]",
                self.endpoint, self.endpoint
            ),
        }
    }

    /// The protocol-independent settings both adapters take.
    pub fn settings(&self, http: HttpConfig) -> EndpointSettings {
        let mut s = EndpointSettings::new(&self.endpoint, &self.base_url, &self.model, self.key.clone());
        s.model_info = self.model_info;
        s.max_tokens = self.max_tokens;
        s.key_hint = self.key_hint();
        let t = self.timeouts;
        s.http = HttpConfig {
            headers: self.headers.clone(),
            connect_timeout: t.connect.unwrap_or(http.connect_timeout),
            stall_timeout: t.stall.unwrap_or(http.stall_timeout),
            first_byte_timeout: t.first_byte.unwrap_or(http.first_byte_timeout),
            request_timeout: t.request.unwrap_or(http.request_timeout),
            ..http
        };
        s
    }
}

/// Builds the client for a resolved endpoint, as the agent's [`Sender`].
pub fn build_sender(r: &Resolved, http: HttpConfig) -> Result<Arc<dyn Sender>, EndpointError> {
    build_sender_noting(r, http, &mut Vec::new())
}

/// [`build_sender`], adding what the user should know about the client to `notes` (a local
/// model without a chat template).
pub(crate) fn build_sender_noting(
    r: &Resolved,
    http: HttpConfig,
    notes: &mut Vec<String>,
) -> Result<Arc<dyn Sender>, EndpointError> {
    let invalid = |e: octo_provider::SetupError| EndpointError::Invalid {
        endpoint: r.endpoint.clone(),
        message: e.to_string(),
    };
    let settings = r.settings(http);
    Ok(match r.protocol {
        Protocol::Anthropic => {
            Arc::new(AnthropicSender::new(AnthropicConfig::from_settings(settings)).map_err(invalid)?)
        }
        Protocol::Openai => {
            let quirks = r
                .preset
                .or_else(|| preset_by_id("custom"))
                .map_or(octo_provider_openai::STANDARD, |p| p.quirks);
            Arc::new(OpenAiSender::new(OpenAiConfig::from_settings(settings, quirks)).map_err(invalid)?)
        }
        Protocol::Responses => {
            let config = octo_provider_responses::ResponsesConfig {
                auth: r.auth(),
                ..octo_provider_responses::ResponsesConfig::new(settings)
            };
            Arc::new(octo_provider_responses::ResponsesSender::new(config).map_err(invalid)?)
        }
        Protocol::Local => build_local(r, notes)?,
    })
}

#[cfg(feature = "local")]
fn build_local(r: &Resolved, notes: &mut Vec<String>) -> Result<Arc<dyn Sender>, EndpointError> {
    let config = octo_provider_local::LocalConfig {
        path: r.base_url.clone().into(),
        name: Some(r.model.clone()),
        context_size: r.local.context_size,
        threads: r.local.threads,
        temperature: r.local.temperature,
        max_tokens: r.max_tokens,
        tools: r.local.tools,
    };
    let sender = octo_provider_local::LocalSender::spawn(config, &crate::models::engine_program())
        .map_err(|e| EndpointError::Invalid { endpoint: r.endpoint.clone(), message: e.to_string() })?;
    notes.extend(sender.notice().map(str::to_owned));
    Ok(Arc::new(sender))
}

#[cfg(not(feature = "local"))]
fn build_local(r: &Resolved, _: &mut Vec<String>) -> Result<Arc<dyn Sender>, EndpointError> {
    Err(EndpointError::Invalid { endpoint: r.endpoint.clone(), message: NO_LOCAL.into() })
}

/// An endpoint that could not be reached.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{url} is unreachable: {reason}")]
pub struct Unreachable {
    /// The base URL tried.
    pub url: String,
    /// The innermost cause.
    pub reason: String,
}
