//! Setting up an endpoint: the providers to choose from, the models an endpoint offers, one test
//! request, and writing the choice into the user's `config.toml` without disturbing what is
//! already there (comments, order and other settings are kept; `toml_edit`). Front ends drive
//! the questions; nothing here reads a terminal.

use crate::config::{parse_file, ConfigError, EndpointConfig, Protocol};
use crate::factory::{build_sender, Resolved, Unreachable};
use octo_provider::HttpConfig;
use std::path::Path;

/// A provider the user can pick.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provider {
    /// Endpoint id (`anthropic`, `deepseek`, `ollama`, `custom`).
    pub id: &'static str,
    /// A human name.
    pub display: &'static str,
    /// Its base URL (empty for `custom`: the user gives one).
    pub base_url: &'static str,
    /// The environment variable its key usually lives in (empty: no key needed).
    pub key_env: &'static str,
    /// The model suggested first.
    pub default_model: &'static str,
    /// A server on this machine or network (no key; the URL may differ).
    pub local: bool,
}

/// Every provider octo knows, hosted ones first, then local servers, then any
/// OpenAI-compatible URL (`custom`).
pub fn providers() -> Vec<Provider> {
    let mut out = vec![Provider {
        id: "anthropic",
        display: "Anthropic",
        base_url: octo_provider_anthropic::DEFAULT_BASE_URL,
        key_env: "ANTHROPIC_API_KEY",
        default_model: "claude-sonnet-4-5",
        local: false,
    }];
    let presets = octo_provider_openai::PRESETS.iter().map(|p| Provider {
        id: p.id,
        display: p.display,
        base_url: p.base_url,
        key_env: p.key_env,
        default_model: p.default_model,
        local: octo_provider_openai::is_local_url(p.base_url),
    });
    let (local, hosted): (Vec<Provider>, Vec<Provider>) = presets.partition(|p| p.local || p.id == "custom");
    out.extend(hosted);
    // The Responses API's own presets (OpenAI's is the `openai` above, which speaks it).
    out.extend(octo_provider_responses::PRESETS.iter().filter(|p| p.id != "openai").map(|p| Provider {
        id: p.id,
        display: p.display,
        base_url: p.base_url,
        key_env: p.key_env,
        default_model: p.default_model,
        local: false,
    }));
    let (custom, local): (Vec<Provider>, Vec<Provider>) = local.into_iter().partition(|p| p.id == "custom");
    out.extend(local);
    out.extend(custom);
    out
}

/// The endpoint settings a choice needs in `config.toml` (only what differs from the built-in
/// preset): a URL, a key variable, the protocol of a custom server.
pub fn endpoint_entry(provider: &Provider, base_url: Option<&str>, key_env: Option<&str>) -> EndpointConfig {
    let base = base_url.filter(|u| *u != provider.base_url).map(str::to_owned);
    let custom = provider.id == "custom";
    EndpointConfig {
        protocol: custom.then_some(Protocol::Openai),
        preset: None,
        base_url: base,
        api_key_env: key_env.filter(|k| *k != provider.key_env).map(str::to_owned),
        ..EndpointConfig::default()
    }
}

/// Resolves the choice against the user's configuration as it would be after writing it: the
/// endpoint's table overlaid with `entry`, and `key` (typed by the user) as its key.
pub fn resolve_choice(
    config: &crate::config::Config,
    endpoint: &str,
    entry: &EndpointConfig,
    model: Option<&str>,
    key: Option<&str>,
    env: crate::config::EnvLookup<'_>,
) -> Result<Resolved, crate::factory::EndpointError> {
    let mut config = config.clone();
    let mut ep = config.endpoints.get(endpoint).map(|s| s.value.clone()).unwrap_or_default();
    if entry.protocol.is_some() {
        ep.protocol = entry.protocol;
    }
    if entry.base_url.is_some() {
        ep.base_url.clone_from(&entry.base_url);
    }
    if entry.api_key_env.is_some() {
        ep.api_key_env.clone_from(&entry.api_key_env);
    }
    let changed = ep != EndpointConfig::default() || config.endpoints.contains_key(endpoint);
    if changed {
        config.endpoints.insert(
            endpoint.to_owned(),
            crate::config::Sourced { value: ep, source: crate::config::Source::Default },
        );
    }
    let store = crate::credentials::MemoryStore::with(&key.map(|k| vec![(endpoint, k)]).unwrap_or_default());
    let choice = match model {
        Some(m) => format!("{endpoint}:{m}"),
        None => endpoint.to_owned(),
    };
    crate::factory::resolve(&config, Some(&choice), &store, env)
}

fn error_text(e: &reqwest::Error) -> String {
    let mut msg = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        msg = s.to_string();
        src = s.source();
    }
    msg
}

/// Checks that the endpoint works for octo: it lists its models with the key (an answer such as
/// 404 or 401 is not a working endpoint: the URL or the key is wrong). Read-only. A local model
/// has no server: its file is what must be there. Returns what answered.
pub async fn probe(r: &Resolved) -> Result<String, Unreachable> {
    if r.protocol == Protocol::Local {
        #[cfg(feature = "local")]
        return local_ready(r);
        #[cfg(not(feature = "local"))]
        return Err(Unreachable { url: r.base_url.clone(), reason: crate::factory::NO_LOCAL.into() });
    }
    let ids = list_models(r).await.map_err(|mut u| {
        if u.reason.starts_with("HTTP 404") {
            u.reason.push_str(" (no model list there: check `base_url`)");
        } else if u.reason.starts_with("HTTP 401") || u.reason.starts_with("HTTP 403") {
            u.reason.push_str(" (the key was refused)");
        }
        u
    })?;
    let listed = ids.contains(&r.model);
    Ok(match (ids.len(), listed) {
        (0, _) => format!("{} answered", r.base_url),
        (n, true) => format!("{} lists {n} models, {} among them", r.base_url, r.model),
        (n, false) => format!("{} lists {n} models (not {}: check the name)", r.base_url, r.model),
    })
}

/// A local endpoint works when its file is a GGUF model and the engine program is there.
#[cfg(feature = "local")]
fn local_ready(r: &Resolved) -> Result<String, Unreachable> {
    let unreachable = |reason: String| Unreachable { url: r.base_url.clone(), reason };
    octo_provider_local::check_gguf(std::path::Path::new(&r.base_url))
        .map_err(|e| unreachable(e.to_string()))?;
    let engine = crate::models::engine_program();
    if !engine.is_file() {
        return Err(unreachable(format!(
            "the engine program {} is missing: it is installed beside the octo binary (`cargo install --path cmd/octo` installs both); or set OCTO_ENGINE to its path",
            engine.display()
        )));
    }
    Ok(format!("{} is a GGUF model, run by {}", r.base_url, engine.display()))
}

/// The models the endpoint lists (`GET {base}/models`, as OpenAI-compatible servers and
/// Anthropic answer it), sorted; empty when it lists none.
pub async fn list_models(r: &Resolved) -> Result<Vec<String>, Unreachable> {
    let unreachable = |reason: String| Unreachable { url: r.base_url.clone(), reason };
    let http = HttpConfig { connect_timeout: std::time::Duration::from_secs(5), ..HttpConfig::default() };
    let client = octo_provider::build_client(&http).map_err(|e| unreachable(e.to_string()))?;
    let base = r.base_url.trim_end_matches('/');
    let mut req = match r.protocol {
        Protocol::Anthropic => {
            let mut q =
                client.get(format!("{base}/v1/models?limit=100")).header("anthropic-version", "2023-06-01");
            if let Some(k) = &r.key {
                q = q.header("x-api-key", k);
            }
            q
        }
        Protocol::Local => return Ok(Vec::new()),
        Protocol::Openai | Protocol::Responses => {
            let mut q = client.get(format!("{base}/models"));
            match (&r.key, r.auth()) {
                (Some(k), octo_provider_responses::Auth::ApiKeyHeader) => q = q.header("api-key", k),
                (Some(k), octo_provider_responses::Auth::Bearer) => q = q.bearer_auth(k),
                (None, _) => {}
            }
            q
        }
    };
    for (k, v) in &r.headers {
        req = req.header(k, v);
    }
    let resp = req
        .timeout(std::time::Duration::from_secs(15))
        .send()
        .await
        .map_err(|e| unreachable(error_text(&e)))?;
    let status = resp.status();
    let bytes = resp.bytes().await.map_err(|e| unreachable(error_text(&e)))?;
    let body: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
    if !status.is_success() {
        let detail = body["error"]["message"].as_str().or_else(|| body["error"].as_str()).unwrap_or("");
        return Err(unreachable(format!("HTTP {} {detail}", status.as_u16())));
    }
    let mut ids: Vec<String> = body["data"]
        .as_array()
        .or_else(|| body["models"].as_array())
        .map(|list| {
            list.iter()
                .filter_map(|m| {
                    m["id"]
                        .as_str()
                        .or_else(|| m["name"].as_str())
                        .map(|id| id.trim_start_matches("models/").to_owned())
                })
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids.dedup();
    Ok(ids)
}

/// Why the test request of `octo setup` failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TryError {
    /// The endpoint's client could not be built.
    #[error(transparent)]
    Endpoint(#[from] crate::factory::EndpointError),
    /// The model did not answer in time.
    #[error("no answer within 60 seconds")]
    Timeout,
    /// The request failed (the provider's error says why: a refused key, an unknown model).
    #[error(transparent)]
    Request(#[from] octo_agent::ProviderError),
}

/// Sends one short request and returns the model's reply: the proof that endpoint, key and model
/// work together.
pub async fn try_endpoint(r: &Resolved) -> Result<String, TryError> {
    let http = HttpConfig {
        retry: octo_provider::RetryPolicy { max_attempts: 1, ..octo_provider::RetryPolicy::default() },
        ..HttpConfig::default()
    };
    let sender = build_sender(r, http)?;
    let msgs = [octo_agent::Message::user("Reply with the single word: ready")];
    let req = octo_agent::Request::new(&msgs).with_max_tokens(Some(64));
    let reply = tokio::time::timeout(std::time::Duration::from_secs(60), sender.send(req))
        .await
        .map_err(|_| TryError::Timeout)??;
    Ok(reply.message.text())
}

/// Writes `default = "endpoint:model"` (and the endpoint's table when `entry` has anything to
/// say) into the config file at `path`, keeping everything else as it was. The new text is
/// checked to load before it replaces the file, and it replaces it in one rename: an error or an
/// interruption leaves the old file untouched. An existing file that is not valid TOML is not
/// touched.
pub fn write_config(
    path: &Path,
    endpoint: &str,
    model: &str,
    entry: &EndpointConfig,
) -> Result<(), ConfigError> {
    let old = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(ConfigError::Read { path: path.to_path_buf(), reason: e.to_string() }),
    };
    parse_file(path, &old)?;
    let mut doc: toml_edit::DocumentMut = old.parse().map_err(|e: toml_edit::TomlError| {
        ConfigError::Invalid { path: path.to_path_buf(), line: 1, column: 1, message: e.to_string() }
    })?;
    doc["default"] = toml_edit::value(format!("{endpoint}:{model}"));
    let fields: Vec<(&str, String)> = [
        ("protocol", entry.protocol.map(|p| p.as_str().to_owned())),
        ("base_url", entry.base_url.clone()),
        ("api_key_env", entry.api_key_env.clone()),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.map(|v| (k, v)))
    .collect();
    if !fields.is_empty() {
        if doc.get("endpoints").is_none() {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            doc["endpoints"] = toml_edit::Item::Table(t);
        }
        let table = doc["endpoints"].as_table_mut().ok_or_else(|| ConfigError::Value {
            source_desc: path.display().to_string(),
            message: "`endpoints` is not a table".into(),
        })?;
        if !table.contains_key(endpoint) {
            table[endpoint] = toml_edit::Item::Table(toml_edit::Table::new());
        }
        for (k, v) in fields {
            table[endpoint][k] = toml_edit::value(v);
        }
    }
    replace_file(path, &doc.to_string())
}

/// Replaces the config file at `path` with `text` after checking that it loads: written to a
/// private temporary file beside it and renamed over it, so an error or an interruption leaves
/// the old file as it was.
pub(crate) fn replace_file(path: &Path, text: &str) -> Result<(), ConfigError> {
    parse_file(path, text)?;
    let write = |e: std::io::Error| ConfigError::Read {
        path: path.to_path_buf(),
        reason: format!("cannot write: {e}"),
    };
    if let Some(dir) = path.parent() {
        octo_session::private::create_dir(dir).map_err(write)?;
    }
    let tmp = path.with_extension(format!("toml.tmp-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    {
        use std::io::Write;
        let mut f = octo_session::private::create_new(&tmp).map_err(write)?;
        f.write_all(text.as_bytes()).map_err(write)?;
        f.sync_all().map_err(write)?;
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        write(e)
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_choice_is_written_and_everything_else_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("config.toml");
        let old = "# my settings\nmax_turns = 30 # keep this\n\n[permissions]\nallow = [\"terminal(ls)\"]\n";
        std::fs::write(&path, old).unwrap();
        let p = providers().into_iter().find(|p| p.id == "custom").unwrap();
        let entry = endpoint_entry(&p, Some("http://localhost:9000/v1"), Some("MY_KEY"));
        write_config(&path, "custom", "m1", &entry).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# my settings\nmax_turns = 30 # keep this\n"), "{text}");
        assert!(text.contains("default = \"custom:m1\""));
        assert!(text.contains("allow = [\"terminal(ls)\"]"));
        assert!(
            text.contains("[endpoints.custom]") && text.contains("base_url = \"http://localhost:9000/v1\""),
            "{text}"
        );
        let cfg = crate::config::parse_file(&path, &text).unwrap();
        assert_eq!(cfg.max_turns, Some(30));
        // A broken file is not overwritten.
        std::fs::write(&path, "max_turns = = 3").unwrap();
        let p = providers().into_iter().find(|p| p.id == "deepseek").unwrap();
        assert!(write_config(&path, "deepseek", "deepseek-chat", &endpoint_entry(&p, None, None)).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "max_turns = = 3");
        let names: Vec<&str> = providers().iter().map(|p| p.id).collect();
        assert_eq!(names.first(), Some(&"anthropic"));
        assert_eq!(names.last(), Some(&"custom"));
        assert!(names.contains(&"gemini"));
    }
}
