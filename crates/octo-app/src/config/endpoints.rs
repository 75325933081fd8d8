//! `[endpoints.<id>]`: which protocol an endpoint speaks, where it is, its timeouts and what to
//! assume about its models.

use serde::Deserialize;
use std::collections::BTreeMap;
use thiserror::Error;

/// Which wire protocol an endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// Anthropic Messages.
    Anthropic,
    /// OpenAI Chat Completions.
    Openai,
    /// OpenAI's Responses API (`POST /responses`).
    Responses,
    /// A GGUF model run inside octo (llama.cpp).
    Local,
}

impl Protocol {
    /// The configuration spelling.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::Openai => "openai",
            Self::Responses => "responses",
            Self::Local => "local",
        }
    }
}

/// One `[endpoints.<id>]` table.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndpointConfig {
    /// Wire protocol; defaults from the preset or the id (`anthropic` → Anthropic, else OpenAI).
    pub protocol: Option<Protocol>,
    /// An OpenAI-compatible preset to start from (`deepseek`, `ollama`, ...).
    pub preset: Option<String>,
    /// Base URL.
    pub base_url: Option<String>,
    /// Environment variable holding the key (default: the preset's, e.g. `DEEPSEEK_API_KEY`).
    pub api_key_env: Option<String>,
    /// Extra HTTP headers.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Models offered by this endpoint (the first is its default).
    #[serde(default)]
    pub models: Vec<String>,
    /// Context window per model, overriding the catalog.
    #[serde(default)]
    pub context_windows: BTreeMap<String, u64>,
    /// Window, output cap and prices per model, overriding the catalog.
    #[serde(default)]
    pub model_info: BTreeMap<String, ModelOverride>,
    /// Output cap per request.
    pub max_tokens: Option<u32>,
    /// Seconds allowed to open a connection (fractions allowed; default 15).
    pub connect_timeout: Option<f64>,
    /// Seconds a stream may stay silent after its first byte before it counts as stalled
    /// (default 120).
    pub stall_timeout: Option<f64>,
    /// Seconds a streamed request waits for the response and its first byte (default 300: a
    /// local server may read a long prompt first).
    pub first_byte_timeout: Option<f64>,
    /// Seconds a whole (not streamed) request may take (default 600).
    pub request_timeout: Option<f64>,
    /// A local model's GGUF file or name (`protocol = "local"`; default: `--model`, then the
    /// first pulled model).
    pub file: Option<String>,
    /// A local model's context size in tokens (default 8192, at most the model's own).
    pub context_size: Option<u32>,
    /// A local model's CPU threads (default: the physical cores).
    pub threads: Option<usize>,
    /// A local model's sampling temperature (default 0.2; 0 is greedy).
    pub temperature: Option<f32>,
    /// Whether a local model is offered tools (default: when it has a billion parameters or
    /// more; smaller ones run as plain chat).
    pub tools: Option<bool>,
}

/// The timeouts of an endpoint, checked: positive, finite seconds.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Timeouts {
    /// Opening a connection.
    pub connect: Option<std::time::Duration>,
    /// Silence in a stream after its first byte.
    pub stall: Option<std::time::Duration>,
    /// The wait for a stream's first byte.
    pub first_byte: Option<std::time::Duration>,
    /// Waiting for the response headers.
    pub request: Option<std::time::Duration>,
}

/// A timeout that is not a usable number of seconds.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("[endpoints.{endpoint}] {key} = {value}: give a number of seconds above 0 (fractions allowed), at most a day")]
pub struct TimeoutError {
    /// The endpoint.
    pub endpoint: String,
    /// The key (`connect_timeout`, `stall_timeout`, `first_byte_timeout`, `request_timeout`).
    pub key: &'static str,
    /// The value given.
    pub value: f64,
}

impl EndpointConfig {
    /// The configured timeouts; an invalid one names its key.
    pub fn timeouts(&self, id: &str) -> Result<Timeouts, TimeoutError> {
        let check =
            |key: &'static str, v: Option<f64>| -> Result<Option<std::time::Duration>, TimeoutError> {
                match v {
                    None => Ok(None),
                    Some(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => {
                        Ok(Some(std::time::Duration::from_secs_f64(s)))
                    }
                    Some(value) => Err(TimeoutError { endpoint: id.to_owned(), key, value }),
                }
            };
        Ok(Timeouts {
            connect: check("connect_timeout", self.connect_timeout)?,
            stall: check("stall_timeout", self.stall_timeout)?,
            first_byte: check("first_byte_timeout", self.first_byte_timeout)?,
            request: check("request_timeout", self.request_timeout)?,
        })
    }
}

/// One `[endpoints.<id>.model_info.<model>]` table: what octo should assume about a model the
/// catalog does not know, or knows differently (a fine-tune, a proxy with other prices).
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelOverride {
    /// Tokens the prompt and output may occupy together.
    pub context_window: Option<u64>,
    /// Most output tokens per response.
    pub max_output: Option<u32>,
    /// USD per million uncached input tokens.
    pub input_price: Option<f64>,
    /// USD per million output tokens.
    pub output_price: Option<f64>,
    /// USD per million input tokens read from cache (default: the catalog's, else the input price).
    pub cache_read_price: Option<f64>,
    /// USD per million input tokens written to cache (default: the catalog's, else the input price).
    pub cache_write_price: Option<f64>,
}

impl ModelOverride {
    /// `info` with these fields applied. A price given for a model without one starts from zero
    /// for the other parts, with cache prices defaulting to the input price.
    pub(crate) fn apply(&self, mut info: octo_provider::ModelInfo) -> octo_provider::ModelInfo {
        if let Some(w) = self.context_window {
            info.context_window = w;
        }
        if let Some(m) = self.max_output {
            info.max_output = m;
        }
        let any_price = self.input_price.is_some()
            || self.output_price.is_some()
            || self.cache_read_price.is_some()
            || self.cache_write_price.is_some();
        if any_price {
            let had = info.price;
            let mut p = had.unwrap_or(octo_provider::Price {
                input: 0.0,
                output: 0.0,
                cache_read: 0.0,
                cache_write: 0.0,
            });
            if let Some(v) = self.input_price {
                p.input = v;
            }
            if let Some(v) = self.output_price {
                p.output = v;
            }
            p.cache_read =
                self.cache_read_price.unwrap_or(if had.is_some() { p.cache_read } else { p.input });
            p.cache_write =
                self.cache_write_price.unwrap_or(if had.is_some() { p.cache_write } else { p.input });
            info.price = Some(p);
        }
        info
    }
}
