//! The model loaded in this process: its chat template, whether it gets tools, its context and
//! the worker thread that owns it. Used by [`crate::LocalSender::new`] and by the engine program.

use crate::limits::{DEFAULT_CONTEXT, TOOL_PARAMS};
use crate::stats::Stats;
use crate::wire::{Info, Open};
use crate::worker::{Settings, Worker};
use crate::LocalError;
use llama_cpp_2::model::LlamaChatTemplate;
use std::sync::{Arc, Mutex};

/// The template used when a model has none: ChatML, which most small instruction models follow.
const FALLBACK_TEMPLATE: &str = "{%- for message in messages -%}{{- '<|im_start|>' + message['role'] + '\n' + (message['content'] if message['content'] is string else '') + '<|im_end|>\n' -}}{%- endfor -%}{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\n' -}}{%- endif -%}";

/// Loads the model (once per process), starts a context and its worker; what the model is.
pub fn open(config: &Open, stats: Arc<Mutex<Stats>>) -> Result<(Worker, Info), LocalError> {
    let model = crate::engine::model(&config.path)?;
    let (template, notice) = match model.chat_template(None) {
        Ok(t) => (t, None),
        Err(_) => (
            LlamaChatTemplate::new(FALLBACK_TEMPLATE).map_err(|e| LocalError::Engine(e.to_string()))?,
            Some(format!(
                "{} has no chat template; octo uses ChatML, which may not be what the model was trained on",
                config.path.display()
            )),
        ),
    };
    let params = model.n_params();
    let chat_only = config.tools.map_or(params < TOOL_PARAMS, |t| !t);
    let notice = match (notice, chat_only && config.tools.is_none()) {
        (n, false) => n,
        (n, true) => {
            let small = format!(
                "this model has {} million parameters, too few to keep to a tool-call format: it runs as plain chat, without tools (set `tools = true` in its [endpoints.<id>] table to try them anyway, or `octo models pull qwen2.5-coder-1.5b` for one that can)",
                params / 1_000_000
            );
            Some(n.map_or(small.clone(), |n| format!("{n}; {small}")))
        }
    };
    let trained = model.n_ctx_train().max(512);
    let n_ctx = config.context_size.unwrap_or(DEFAULT_CONTEXT).clamp(512, trained);
    let settings = Settings {
        n_ctx,
        threads: config.threads.unwrap_or_else(crate::cores::physical_cores),
        temperature: config.temperature.unwrap_or(0.2),
    };
    let worker = Worker::start(model, template, settings, stats)?;
    Ok((worker, Info { n_ctx, notice, chat_only, small: params < TOOL_PARAMS }))
}
