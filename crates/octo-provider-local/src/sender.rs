//! [`LocalSender`]: the provider stack on a local model.

use crate::limits::SMALL_ANSWER;
use crate::process::Process;
use crate::stats::Stats;
use crate::wire::{Info, Open, WireJob};
use crate::LocalError;
use futures_util::StreamExt;
use octo_agent::async_trait;
use octo_agent::{
    Assembler, EventStream, ProviderError, Request, Response, Sender, StreamingSender, ToolChoice,
    ToolSender, ToolStreamingSender,
};
use std::path::{Path, PathBuf};
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

/// A local model with its own context (and KV cache): on a worker thread of this process
/// ([`LocalSender::new`]) or in a separate engine program ([`LocalSender::spawn`]).
pub struct LocalSender {
    name: String,
    backend: Backend,
    info: Info,
    max_tokens: u32,
    stats: Arc<Mutex<Stats>>,
}

/// Where the model runs.
enum Backend {
    /// On a worker thread of this process.
    #[cfg(feature = "engine")]
    Here(crate::worker::Worker),
    /// In an engine program, over its stdin and stdout.
    Apart(Process),
}

impl std::fmt::Debug for LocalSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalSender")
            .field("name", &self.name)
            .field("n_ctx", &self.info.n_ctx)
            .finish_non_exhaustive()
    }
}

fn open_of(config: &LocalConfig) -> Open {
    Open {
        path: config.path.clone(),
        context_size: config.context_size,
        threads: config.threads,
        temperature: config.temperature,
        tools: config.tools,
    }
}

impl LocalSender {
    /// Loads the model in this process (once per process) and starts a context for it.
    #[cfg(feature = "engine")]
    pub fn new(config: LocalConfig) -> Result<Self, LocalError> {
        let stats = Arc::new(Mutex::new(Stats::default()));
        let (worker, info) = crate::inproc::open(&open_of(&config), Arc::clone(&stats))?;
        Ok(Self::with(&config, Backend::Here(worker), info, stats))
    }

    /// Runs the model in the engine program `engine` (a child process that is stopped with the
    /// sender): this process loads no llama.cpp, and a crash of the engine fails the request
    /// instead of the process (the next request starts it again). Waits until the model is
    /// loaded; the file is checked first, so a wrong path fails without starting anything.
    pub fn spawn(config: LocalConfig, engine: &Path) -> Result<Self, LocalError> {
        crate::gguf::check_gguf(&config.path)?;
        let stats = Arc::new(Mutex::new(Stats::default()));
        let (process, info) = Process::start(engine, open_of(&config), Arc::clone(&stats))?;
        Ok(Self::with(&config, Backend::Apart(process), info, stats))
    }

    fn with(config: &LocalConfig, backend: Backend, info: Info, stats: Arc<Mutex<Stats>>) -> Self {
        let name = config.name.clone().unwrap_or_else(|| {
            config.path.file_stem().map_or_else(|| "local".into(), |s| s.to_string_lossy().into_owned())
        });
        Self {
            name: format!("local:{name}"),
            backend,
            info,
            max_tokens: config.max_tokens.unwrap_or(2048),
            stats,
        }
    }

    /// A note for the user about how the model is run (a fallback chat template), if any.
    pub fn notice(&self) -> Option<&str> {
        self.info.notice.as_deref()
    }

    /// Whether the model is offered no tools.
    pub fn chat_only(&self) -> bool {
        self.info.chat_only
    }

    /// The context size in tokens.
    pub fn context_size(&self) -> u32 {
        self.info.n_ctx
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
        let max_tokens = request.max_tokens.unwrap_or(self.max_tokens).min(self.info.n_ctx);
        let spec = WireJob {
            id: 0,
            messages: crate::chat::messages(request.system, request.messages),
            tools,
            tool_choice: tool_choice.to_owned(),
            only_tool,
            max_tokens,
            soft_cap: (self.info.small && request.max_tokens.is_none()).then_some(SMALL_ANSWER),
        };
        match &self.backend {
            #[cfg(feature = "engine")]
            Backend::Here(worker) => {
                let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
                worker.submit(crate::worker::Job { spec, events: tx })?;
                Ok(Box::pin(futures_util::stream::unfold(rx, |mut rx| async move {
                    rx.recv().await.map(|e| (e, rx))
                })))
            }
            Backend::Apart(process) => process.submit(spec),
        }
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
        (!self.info.chat_only).then_some(self as &dyn ToolSender)
    }

    fn as_tool_streaming(&self) -> Option<&dyn ToolStreamingSender> {
        (!self.info.chat_only).then_some(self as &dyn ToolStreamingSender)
    }

    fn context_window(&self) -> Option<u64> {
        Some(u64::from(self.info.n_ctx))
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
