//! What a local server says about the model it serves: its context window. A hosted API's window
//! is in the catalog; a local server's is whatever it was started with (llama.cpp `-c 8192`,
//! Ollama's `num_ctx`), so octo asks it once.
//!
//! | server | asked | read |
//! |---|---|---|
//! | llama.cpp | `GET {root}/props` | `default_generation_settings.n_ctx` (or `n_ctx`) |
//! | Ollama | `POST {root}/api/show {"model"}` | `num_ctx` in `parameters`, else `<arch>.context_length` |
//! | vLLM | `GET {base}/models` | the model's `max_model_len` |
//! | LM Studio | `GET {root}/api/v0/models/{model}` | `loaded_context_length`, else `max_context_length` |
//!
//! `{base}` is the configured base URL (ending in `/v1`), `{root}` the same without `/v1`.
//! Anything unexpected (no answer, another server, no number) means "not known"; discovery never
//! fails a request.

use serde_json::Value;
use std::time::Duration;

/// How long discovery may take before octo goes on without it.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(2);

/// Which kind of local server an endpoint is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalServer {
    /// llama.cpp's `llama-server`.
    LlamaCpp,
    /// Ollama.
    Ollama,
    /// vLLM.
    Vllm,
    /// LM Studio.
    LmStudio,
    /// A local server of unknown kind: the llama.cpp and vLLM ways are tried.
    Unknown,
}

impl LocalServer {
    /// The kind a preset id names (`None` for hosted presets).
    pub fn of_preset(id: &str) -> Option<Self> {
        Some(match id {
            "llamacpp" => Self::LlamaCpp,
            "ollama" => Self::Ollama,
            "vllm" => Self::Vllm,
            "lmstudio" => Self::LmStudio,
            _ => return None,
        })
    }
}

/// Whether `base_url` points at this machine or a private network (where local servers live).
pub fn is_local_url(base_url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(base_url) else { return false };
    let Some(host) = url.host_str() else { return false };
    match host.trim_start_matches('[').trim_end_matches(']').parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => ip.is_loopback() || ip.is_private() || ip.is_link_local(),
        Ok(std::net::IpAddr::V6(ip)) => ip.is_loopback(),
        Err(_) => host == "localhost" || host.ends_with(".localhost") || host.ends_with(".local"),
    }
}

/// The server's root: the base URL without a trailing `/v1`.
fn root(base_url: &str) -> &str {
    let b = base_url.trim_end_matches('/');
    b.strip_suffix("/v1").unwrap_or(b)
}

async fn get_json(req: reqwest::RequestBuilder) -> Option<Value> {
    let resp = req.timeout(DISCOVERY_TIMEOUT).send().await.ok()?;
    if !resp.status().is_success() {
        return None;
    }
    let body = resp.bytes().await.ok()?;
    serde_json::from_slice(&body).ok()
}

fn positive(v: &Value) -> Option<u64> {
    v.as_u64().filter(|n| *n > 0)
}

/// llama.cpp: `/props`.
fn from_llamacpp(v: &Value) -> Option<u64> {
    positive(&v["default_generation_settings"]["n_ctx"])
        .or_else(|| positive(&v["default_generation_settings"]["params"]["n_ctx"]))
        .or_else(|| positive(&v["n_ctx"]))
}

/// Ollama: `/api/show`. `num_ctx` (what the model runs with) beats the architecture's maximum.
fn from_ollama(v: &Value) -> Option<u64> {
    let params = v["parameters"].as_str().unwrap_or_default();
    let num_ctx = params.lines().find_map(|l| {
        let mut words = l.split_whitespace();
        (words.next() == Some("num_ctx")).then(|| words.next()?.parse::<u64>().ok()).flatten()
    });
    num_ctx.or_else(|| {
        v["model_info"]
            .as_object()?
            .iter()
            .find(|(k, _)| k.ends_with(".context_length"))
            .and_then(|(_, n)| positive(n))
    })
}

/// vLLM: `/v1/models`.
fn from_vllm(v: &Value, model: &str) -> Option<u64> {
    let data = v["data"].as_array()?;
    let entry = data.iter().find(|m| m["id"] == model).or_else(|| (data.len() == 1).then(|| &data[0]))?;
    positive(&entry["max_model_len"])
}

/// LM Studio: `/api/v0/models/{model}`.
fn from_lmstudio(v: &Value) -> Option<u64> {
    positive(&v["loaded_context_length"]).or_else(|| positive(&v["max_context_length"]))
}

/// Asks the server at `base_url` for `model`'s context window.
pub async fn context_window(
    client: &reqwest::Client,
    base_url: &str,
    model: &str,
    server: LocalServer,
) -> Option<u64> {
    let root = root(base_url);
    let base = base_url.trim_end_matches('/');
    let llamacpp = || async { from_llamacpp(&get_json(client.get(format!("{root}/props"))).await?) };
    let vllm = || async { from_vllm(&get_json(client.get(format!("{base}/models"))).await?, model) };
    match server {
        LocalServer::LlamaCpp => llamacpp().await,
        LocalServer::Vllm => vllm().await,
        LocalServer::Ollama => {
            let req = client
                .post(format!("{root}/api/show"))
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(serde_json::json!({"model": model}).to_string());
            from_ollama(&get_json(req).await?)
        }
        LocalServer::LmStudio => {
            let url = format!("{root}/api/v0/models/{model}");
            from_lmstudio(&get_json(client.get(url)).await?)
        }
        LocalServer::Unknown => match llamacpp().await {
            Some(n) => Some(n),
            None => vllm().await,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_servers_answer_is_read() {
        assert_eq!(from_llamacpp(&json!({"default_generation_settings": {"n_ctx": 8192}})), Some(8192));
        assert_eq!(from_llamacpp(&json!({"n_ctx": 4096})), Some(4096));
        assert_eq!(from_llamacpp(&json!({"n_ctx": 0})), None);
        let show = json!({"parameters": "stop \"<|im_end|>\"\nnum_ctx 16384", "model_info": {"qwen2.context_length": 32768}});
        assert_eq!(from_ollama(&show), Some(16384), "what it runs with, not what it could");
        assert_eq!(from_ollama(&json!({"model_info": {"llama.context_length": 131072}})), Some(131072));
        let models =
            json!({"data": [{"id": "a", "max_model_len": 1000}, {"id": "b", "max_model_len": 2000}]});
        assert_eq!(from_vllm(&models, "b"), Some(2000));
        assert_eq!(from_vllm(&models, "c"), None);
        assert_eq!(
            from_lmstudio(&json!({"max_context_length": 32768, "loaded_context_length": 4096})),
            Some(4096)
        );
    }

    #[test]
    fn local_urls_and_roots() {
        for u in [
            "http://localhost:8080/v1",
            "http://127.0.0.1:11434/v1",
            "http://192.168.1.20:8000/v1",
            "http://[::1]:1234",
        ] {
            assert!(is_local_url(u), "{u}");
        }
        for u in ["https://api.openai.com/v1", "https://openrouter.ai/api/v1", "not a url"] {
            assert!(!is_local_url(u), "{u}");
        }
        assert_eq!(root("http://localhost:8080/v1/"), "http://localhost:8080");
        assert_eq!(root("http://localhost:8080"), "http://localhost:8080");
    }
}
