//! Tools: their definitions, the executor trait, the context a call runs in, and the registry.

use crate::approval::{ApprovalDecision, ApprovalRequest, TurnChannel};
use crate::event::AgentEvent;
use crate::message::{ImageSource, ToolResultPart};
use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// What the model is told about a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// Name the model calls it by; unique in a registry.
    pub name: String,
    /// What it does, its limits, and what to use instead; written for the model.
    pub description: String,
    /// JSON schema of the arguments object.
    pub input_schema: Value,
}

impl ToolDefinition {
    /// A definition from its parts.
    pub fn new(name: impl Into<String>, description: impl Into<String>, input_schema: Value) -> Self {
        Self { name: name.into(), description: description.into(), input_schema }
    }
}

/// What a tool call returns to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// Text and images the model sees.
    pub content: Vec<ToolResultPart>,
    /// Whether the call failed.
    #[serde(default)]
    pub is_error: bool,
}

impl ToolOutput {
    /// A successful text result.
    pub fn text(text: impl Into<String>) -> Self {
        Self { content: vec![ToolResultPart::Text { text: text.into() }], is_error: false }
    }

    /// A failed result; the text tells the model what went wrong and what to do instead.
    pub fn error(text: impl Into<String>) -> Self {
        Self { content: vec![ToolResultPart::Text { text: text.into() }], is_error: true }
    }

    /// Adds an image part.
    pub fn with_image(mut self, source: ImageSource) -> Self {
        self.content.push(ToolResultPart::Image { source });
        self
    }

    /// All text parts joined with newlines.
    pub fn text_content(&self) -> String {
        let mut out = String::new();
        for part in self.content.iter().filter_map(ToolResultPart::as_text) {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(part);
        }
        out
    }
}

/// Parses a tool's JSON arguments into its typed input, or returns the error result that tells the
/// model exactly what was wrong (missing field, wrong type).
pub fn parse_input<T: DeserializeOwned>(tool: &str, input: Value) -> Result<T, ToolOutput> {
    serde_json::from_value(input).map_err(|e| {
        ToolOutput::error(format!(
            "invalid arguments for `{tool}`: {e}. Check the tool's schema and call it again."
        ))
    })
}

/// A tool the model can call.
///
/// Implementations never panic the loop: a failure is an error [`ToolOutput`]. They honour
/// [`ToolContext::cancel`] and stop promptly (killing child processes) when it fires.
#[async_trait]
pub trait ToolExecutor: Send + Sync {
    /// The definition sent to the model. Called once when the tool is registered.
    fn definition(&self) -> ToolDefinition;

    /// Whether the tool only reads (never writes files, runs commands or changes state).
    fn read_only(&self) -> bool {
        false
    }

    /// Whether several calls may run at the same time. Only calls of tools that are both read-only
    /// and concurrency-safe run in parallel.
    fn concurrency_safe(&self) -> bool {
        self.read_only()
    }

    /// Runs one call.
    async fn execute(&self, input: Value, ctx: &ToolContext) -> ToolOutput;
}

/// What a running tool call can see and use: the workspace, cancellation, and the front end.
#[derive(Clone)]
pub struct ToolContext {
    cwd: PathBuf,
    tool_use_id: String,
    cancel: CancellationToken,
    channel: Option<Arc<TurnChannel>>,
    user_approved: bool,
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("cwd", &self.cwd)
            .field("tool_use_id", &self.tool_use_id)
            .field("attached", &self.channel.is_some())
            .finish()
    }
}

impl ToolContext {
    /// A context not attached to any turn: updates go nowhere and approvals are denied. For
    /// running tools outside the agent loop (tests, scripts).
    pub fn detached(cwd: impl Into<PathBuf>) -> Self {
        Self {
            cwd: cwd.into(),
            tool_use_id: String::new(),
            cancel: CancellationToken::new(),
            channel: None,
            user_approved: false,
        }
    }

    pub(crate) fn attached(
        cwd: PathBuf,
        tool_use_id: String,
        cancel: CancellationToken,
        channel: Arc<TurnChannel>,
    ) -> Self {
        Self { cwd, tool_use_id, cancel, channel: Some(channel), user_approved: false }
    }

    /// Replaces the cancellation token.
    pub fn with_cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// Sets the call id (useful with [`ToolContext::detached`]).
    pub fn with_tool_use_id(mut self, id: impl Into<String>) -> Self {
        self.tool_use_id = id.into();
        self
    }

    /// Marks the call as approved by the user for exactly this input (set by the loop after an
    /// approval prompt), so the tool need not ask again about the same thing.
    pub fn with_user_approved(mut self, approved: bool) -> Self {
        self.user_approved = approved;
        self
    }

    /// Whether the user approved this exact call before it started (rather than a rule or mode
    /// allowing it).
    pub fn user_approved(&self) -> bool {
        self.user_approved
    }

    /// The workspace directory relative paths resolve against.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The id of the call being executed.
    pub fn tool_use_id(&self) -> &str {
        &self.tool_use_id
    }

    /// Fires when the turn is cancelled; the tool must stop and clean up.
    pub fn cancel(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Sends a progress or state update (a todo list, partial output) to the front ends.
    pub fn emit_update(&self, kind: impl Into<String>, data: Value) {
        if let Some(ch) = &self.channel {
            ch.emit(AgentEvent::ToolUpdate {
                tool_use_id: self.tool_use_id.clone(),
                kind: kind.into(),
                data,
            });
        }
    }

    /// Asks the user a question through the front end and waits for the answer. `None` when
    /// nobody can answer (a detached context or a non-interactive turn) or on cancellation.
    pub async fn ask_user(&self, question: &str, options: &[String]) -> Option<String> {
        match &self.channel {
            Some(ch) => ch.ask(&self.tool_use_id, question, options, &self.cancel).await,
            None => None,
        }
    }

    /// Asks the user, through the front end, to approve something this call wants to do. Denied
    /// when nobody can answer (a detached context or a non-interactive turn) or on cancellation.
    pub async fn request_approval(&self, request: ApprovalRequest) -> ApprovalDecision {
        match &self.channel {
            Some(ch) => ch.request_approval(request, &self.cancel).await,
            None => ApprovalDecision::Deny { message: Some("no front end is attached to answer".into()) },
        }
    }
}

/// Tools by name, in registration order (the order is what the model sees, and stays stable so
/// provider prompt caches hold).
#[derive(Clone, Default)]
pub struct ToolRegistry {
    definitions: Vec<ToolDefinition>,
    executors: Vec<Arc<dyn ToolExecutor>>,
    index: HashMap<String, usize>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.definitions.iter().map(|d| &d.name)).finish()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool, replacing (in place) any tool of the same name.
    pub fn register(&mut self, tool: Arc<dyn ToolExecutor>) -> &mut Self {
        let def = tool.definition();
        match self.index.get(&def.name) {
            Some(&i) => {
                self.definitions[i] = def;
                self.executors[i] = tool;
            }
            None => {
                self.index.insert(def.name.clone(), self.definitions.len());
                self.definitions.push(def);
                self.executors.push(tool);
            }
        }
        self
    }

    /// Removes a tool by name; returns whether it was there.
    pub fn remove(&mut self, name: &str) -> bool {
        let Some(i) = self.index.remove(name) else { return false };
        self.definitions.remove(i);
        self.executors.remove(i);
        for v in self.index.values_mut() {
            if *v > i {
                *v -= 1;
            }
        }
        true
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn ToolExecutor>> {
        self.index.get(name).map(|&i| &self.executors[i])
    }

    /// Every definition, in order.
    pub fn definitions(&self) -> &[ToolDefinition] {
        &self.definitions
    }

    /// Tool names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.definitions.iter().map(|d| d.name.as_str())
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.definitions.len()
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.definitions.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct Named(&'static str, &'static str);

    #[async_trait]
    impl ToolExecutor for Named {
        fn definition(&self) -> ToolDefinition {
            ToolDefinition::new(self.0, self.1, json!({"type": "object"}))
        }
        async fn execute(&self, _input: Value, _ctx: &ToolContext) -> ToolOutput {
            ToolOutput::text(self.1)
        }
    }

    #[test]
    fn registry_keeps_order_and_replaces_in_place() {
        let mut r = ToolRegistry::new();
        r.register(Arc::new(Named("a", "1")))
            .register(Arc::new(Named("b", "2")))
            .register(Arc::new(Named("c", "3")));
        r.register(Arc::new(Named("b", "new")));
        assert_eq!(r.names().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(r.definitions()[1].description, "new");
        assert!(r.remove("a"));
        assert!(!r.remove("a"));
        assert_eq!(r.names().collect::<Vec<_>>(), ["b", "c"]);
        assert_eq!(r.get("c").unwrap().definition().description, "3");
        assert!(r.get("a").is_none());
        assert_eq!(r.len(), 2);
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Input {
        path: String,
        limit: Option<u32>,
    }

    #[test]
    fn parse_input_explains_bad_arguments() {
        let err = parse_input::<Input>("read_file", json!({"limit": 3})).unwrap_err();
        assert!(err.is_error);
        assert!(err.text_content().contains("missing field `path`"), "{}", err.text_content());
        let err = parse_input::<Input>("read_file", json!({"path": 3})).unwrap_err();
        assert!(err.text_content().contains("invalid type"), "{}", err.text_content());
        assert!(parse_input::<Input>("read_file", json!({"path": "x"})).is_ok());
    }

    #[tokio::test]
    async fn detached_context_denies_approval_and_drops_updates() {
        let ctx = ToolContext::detached("/tmp").with_tool_use_id("t");
        ctx.emit_update("todo", json!([]));
        let d = ctx
            .request_approval(ApprovalRequest::new("t", "terminal", json!({"command": "ls"}), "run ls"))
            .await;
        assert!(matches!(d, ApprovalDecision::Deny { .. }));
        assert_eq!(ctx.cwd(), Path::new("/tmp"));
    }
}
