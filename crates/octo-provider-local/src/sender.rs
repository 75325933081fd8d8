//! [`LocalSender`]: the provider stack on a local model.

use crate::stats::Stats;
use crate::worker::{Job, Settings, Worker};
use crate::LocalError;
use futures_util::StreamExt;
use llama_cpp_2::model::LlamaChatTemplate;
use octo_agent::async_trait;
use octo_agent::{
    Assembler, EventStream, ProviderError, Request, Response, Sender, StreamingSender, ToolChoice,
    ToolSender, ToolStreamingSender,
};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Where the model is and how to run it.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalConfig {
    /// The GGUF file.
    pub path: PathBuf,
    /// The name shown in status lines (default: the file's stem).
    pub name: Option<String>,
    /// The most context tokens; the model's own size when smaller (default 8192).
    pub context_size: Option<u32>,
    /// CPU threads (default: the physical cores).
    pub threads: Option<usize>,
    /// Sampling temperature; 0 is greedy (default 0.2).
    pub temperature: Option<f32>,
    /// Output cap per request when the request gives none (default 2048).
    pub max_tokens: Option<u32>,
    /// Whether the model is offered tools: `None` decides by its size (a model of fewer than a
    /// billion parameters runs as plain chat: it cannot keep to a tool-call format).
    pub tools: Option<bool>,
}

/// Parameters below which a model runs as plain chat unless told otherwise.
pub const TOOL_PARAMS: u64 = 1_000_000_000;

/// Where the answer of a model smaller than [`TOOL_PARAMS`] ends when nobody set a limit: a few
/// paragraphs, reached within about 30 s on two cores (the new user's first answer).
pub const SMALL_ANSWER: u32 = 768;

impl LocalConfig {
    /// The model at `path`, with the defaults.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            name: None,
            context_size: None,
            threads: None,
            temperature: None,
            max_tokens: None,
            tools: None,
        }
    }
}

/// The default context cap: enough for an agent's prompt and some history without a large
/// model's full window (which can need gigabytes of KV cache).
pub const DEFAULT_CONTEXT: u32 = 8192;

/// A model running in this process, with its own context (and KV cache) on a worker thread.
pub struct LocalSender {
    name: String,
    worker: Worker,
    n_ctx: u32,
    max_tokens: u32,
    notice: Option<String>,
    stats: Arc<Mutex<Stats>>,
    /// Offered no tools (too small for a tool-call format, or told so).
    chat_only: bool,
    /// Fewer parameters than a tool-call format needs ([`TOOL_PARAMS`]).
    small: bool,
}

impl std::fmt::Debug for LocalSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalSender")
            .field("name", &self.name)
            .field("n_ctx", &self.n_ctx)
            .finish_non_exhaustive()
    }
}

/// The template used when a model has none: ChatML, which most small instruction models follow.
const FALLBACK_TEMPLATE: &str = "{%- for message in messages -%}{{- '<|im_start|>' + message['role'] + '\n' + (message['content'] if message['content'] is string else '') + '<|im_end|>\n' -}}{%- endfor -%}{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\n' -}}{%- endif -%}";

impl LocalSender {
    /// Loads the model (once per process) and starts a context for it.
    pub fn new(config: LocalConfig) -> Result<Self, LocalError> {
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
        let stats = Arc::new(Mutex::new(Stats::default()));
        let worker = Worker::start(model, template, settings, Arc::clone(&stats))?;
        let name = config.name.clone().unwrap_or_else(|| {
            config.path.file_stem().map_or_else(|| "local".into(), |s| s.to_string_lossy().into_owned())
        });
        Ok(Self {
            name: format!("local:{name}"),
            worker,
            n_ctx,
            max_tokens: config.max_tokens.unwrap_or(2048),
            notice,
            stats,
            chat_only,
            small: params < TOOL_PARAMS,
        })
    }

    /// A note for the user about how the model is run (a fallback chat template), if any.
    pub fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }

    /// Whether the model is offered no tools.
    pub fn chat_only(&self) -> bool {
        self.chat_only
    }

    /// The context size in tokens.
    pub fn context_size(&self) -> u32 {
        self.n_ctx
    }

    /// What the last finished request did.
    pub fn stats(&self) -> Stats {
        self.stats.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    fn start(&self, request: &Request<'_>, with_tools: bool) -> Result<EventStream, ProviderError> {
        let tools = if with_tools && request.tool_choice != ToolChoice::None {
            crate::chat::tools(request.tools)
        } else {
            None
        };
        let only_tool = match request.tool_choice {
            ToolChoice::Tool(name) => Some(name.to_owned()),
            _ => None,
        };
        let tool_choice = match request.tool_choice {
            ToolChoice::Any | ToolChoice::Tool(_) => "required",
            ToolChoice::None => "none",
            ToolChoice::Auto => "auto",
        };
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let max_tokens = request.max_tokens.unwrap_or(self.max_tokens).min(self.n_ctx);
        self.worker.submit(Job {
            messages: crate::chat::messages(request.system, request.messages),
            tools,
            tool_choice,
            only_tool,
            max_tokens,
            soft_cap: (self.small && request.max_tokens.is_none()).then_some(SMALL_ANSWER),
            events: tx,
        })?;
        Ok(Box::pin(futures_util::stream::unfold(
            rx,
            |mut rx| async move { rx.recv().await.map(|e| (e, rx)) },
        )))
    }
}

async fn collect(mut stream: EventStream) -> Result<Response, ProviderError> {
    let mut a = Assembler::new();
    while let Some(ev) = stream.next().await {
        a.push(ev?)?;
    }
    let done = a.finish();
    Ok(done.response)
}

#[async_trait]
impl Sender for LocalSender {
    fn name(&self) -> &str {
        &self.name
    }

    async fn send(&self, request: Request<'_>) -> Result<Response, ProviderError> {
        collect(self.start(&request, false)?).await
    }

    fn as_streaming(&self) -> Option<&dyn StreamingSender> {
        Some(self)
    }

    fn as_tool(&self) -> Option<&dyn ToolSender> {
        (!self.chat_only).then_some(self as &dyn ToolSender)
    }

    fn as_tool_streaming(&self) -> Option<&dyn ToolStreamingSender> {
        (!self.chat_only).then_some(self as &dyn ToolStreamingSender)
    }

    fn context_window(&self) -> Option<u64> {
        Some(u64::from(self.n_ctx))
    }
}

#[async_trait]
impl StreamingSender for LocalSender {
    async fn send_stream(&self, request: Request<'_>) -> Result<EventStream, ProviderError> {
        self.start(&request, false)
    }
}

#[async_trait]
impl ToolSender for LocalSender {
    async fn send_with_tools(&self, request: Request<'_>) -> Result<Response, ProviderError> {
        collect(self.start(&request, true)?).await
    }
}

#[async_trait]
impl ToolStreamingSender for LocalSender {
    async fn send_stream_with_tools(&self, request: Request<'_>) -> Result<EventStream, ProviderError> {
        self.start(&request, true)
    }
}
