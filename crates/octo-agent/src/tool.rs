//! Tools: the executor trait, the context a call runs in, the registry, and the sources a registry
//! is assembled from.

use crate::approval::{ApprovalDecision, ApprovalRequest};
use crate::channel::{AnsweredBy, TurnChannel};
use crate::event::AgentEvent;
use crate::spec::{ToolDefinition, ToolMeta, ToolOutput};
use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

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
/// A tool describes itself ([`ToolExecutor::meta`]): what the permission engine checks, which
/// arguments may be shortened in old history, what its output looks like. Nothing else in octo
/// knows a tool by its name, so adding one is one new type plus one registration.
///
/// Implementations never panic the loop: a failure is an error [`ToolOutput`]. They honour
/// [`ToolContext::cancel`] and stop promptly (killing child processes) when it fires.
#[async_trait]
pub trait ToolExecutor: Send + Sync {
    /// The definition sent to the model. Called once when the tool is registered.
    fn definition(&self) -> ToolDefinition;

    /// How octo treats the tool. Called once when the tool is registered. The default is the
    /// cautious one: it changes things, so it is asked about, and it runs alone.
    fn meta(&self) -> ToolMeta {
        ToolMeta::writes()
    }

    /// A one-line description of a call for approval prompts and status lines, when the
    /// subject's argument ([`ToolMeta::summarize`]) is not the best one.
    fn summary(&self, _input: &Value) -> Option<String> {
        None
    }

    /// What the call would do, shown with its approval before anything runs (the diff of an
    /// edit, the head of a new file); `None` when the summary says it all. Must not change
    /// anything; called only when the user is asked.
    fn preview(&self, _input: &Value, _cwd: &std::path::Path) -> Option<crate::spec::Preview> {
        None
    }

    /// Runs one call.
    async fn execute(&self, input: Value, ctx: &ToolContext) -> ToolOutput;
}

/// How long a summary line may be, in characters.
pub const SUMMARY_CHARS: usize = 200;

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
        self.ask_approval(request).await.0
    }

    /// Like [`ToolContext::request_approval`], and says who settled it: the user, nobody (no one
    /// could be asked), or a cancellation — so a tool can report the right outcome.
    pub async fn ask_approval(&self, request: ApprovalRequest) -> (ApprovalDecision, AnsweredBy) {
        match &self.channel {
            Some(ch) => ch.ask_approval(request, &self.cancel).await,
            None => (
                ApprovalDecision::Deny { message: Some("no front end is attached to answer".into()) },
                AnsweredBy::Nobody,
            ),
        }
    }
}

/// Tools by name, in registration order (the order is what the model sees, and stays stable so
/// provider prompt caches hold). Each tool's definition and metadata are read once, when it is
/// registered.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    definitions: Vec<ToolDefinition>,
    metas: Vec<ToolMeta>,
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
        let meta = tool.meta();
        if let Some(&i) = self.index.get(&def.name) {
            self.definitions[i] = def;
            self.metas[i] = meta;
            self.executors[i] = tool;
        } else {
            self.index.insert(def.name.clone(), self.definitions.len());
            self.definitions.push(def);
            self.metas.push(meta);
            self.executors.push(tool);
        }
        self
    }

    /// Removes a tool by name; returns whether it was there.
    pub fn remove(&mut self, name: &str) -> bool {
        let Some(i) = self.index.remove(name) else { return false };
        self.definitions.remove(i);
        self.metas.remove(i);
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

    /// How the tool called `name` describes itself.
    pub fn meta(&self, name: &str) -> Option<&ToolMeta> {
        self.index.get(name).map(|&i| &self.metas[i])
    }

    /// The one-line summary of a call: the tool's own, else its subject's argument, else the
    /// arguments in compact JSON. Unknown tools get the JSON.
    pub fn summary(&self, name: &str, input: &Value) -> String {
        match self.index.get(name) {
            Some(&i) => self.executors[i]
                .summary(input)
                .unwrap_or_else(|| self.metas[i].summarize(input, SUMMARY_CHARS)),
            None => ToolMeta::writes().summarize(input, SUMMARY_CHARS),
        }
    }

    /// Every definition, in order.
    pub fn definitions(&self) -> &[ToolDefinition] {
        &self.definitions
    }

    /// Every tool, in order.
    pub fn executors(&self) -> &[Arc<dyn ToolExecutor>] {
        &self.executors
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

    /// Assembles a registry from tool sources, with one rule for names and one order.
    ///
    /// Built-in sources come first, in the order given, their tools in their own order; every
    /// other source follows, sorted by id, its tools sorted by name. So the list the model sees
    /// is the same from run to run and the request prefix stays cacheable. Built-ins keep their
    /// names; other sources name their tools in a namespace of their own (`mcp__server__tool`). A
    /// tool whose name is already taken, or is one a provider would reject, is left out, and the
    /// returned notices say which and why.
    pub fn from_sources(sources: &[Arc<dyn ToolSource>]) -> (Self, Vec<String>) {
        let mut ordered: Vec<&Arc<dyn ToolSource>> = sources.iter().filter(|s| s.builtin()).collect();
        let mut others: Vec<&Arc<dyn ToolSource>> = sources.iter().filter(|s| !s.builtin()).collect();
        others.sort_by(|a, b| a.id().cmp(b.id()));
        ordered.extend(others);
        let mut registry = Self::new();
        let mut notices = Vec::new();
        let mut owner: HashMap<String, String> = HashMap::new();
        for source in ordered {
            let mut tools: Vec<(ToolDefinition, Arc<dyn ToolExecutor>)> =
                source.tools().into_iter().map(|t| (t.definition(), t)).collect();
            if !source.builtin() {
                tools.sort_by(|a, b| a.0.name.cmp(&b.0.name));
            }
            for (def, tool) in tools {
                if !valid_tool_name(&def.name) {
                    notices.push(format!(
                        "tool `{}` from {} is left out: a tool name must be 1 to 64 letters, digits, `_` or `-`",
                        def.name,
                        source.id()
                    ));
                    continue;
                }
                if let Some(first) = owner.get(&def.name) {
                    notices.push(format!(
                        "tool `{}` from {} is left out: {first} already has a tool of that name",
                        def.name,
                        source.id()
                    ));
                    continue;
                }
                owner.insert(def.name.clone(), source.id().to_owned());
                registry.register(tool);
            }
        }
        (registry, notices)
    }
}

/// Whether every provider accepts `name` as a tool name: 1 to 64 ASCII letters, digits, `_`, `-`.
pub fn valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Where tools come from: the built-ins, an MCP server, skills, sub-agents. An application
/// assembles its registry from sources with [`ToolRegistry::from_sources`].
pub trait ToolSource: Send + Sync {
    /// A short, stable id for notices and ordering (`builtin`, `mcp:github`, `skills`).
    fn id(&self) -> &str;

    /// Whether this is a built-in source, whose tools keep their names against every other.
    fn builtin(&self) -> bool {
        false
    }

    /// The tools it offers now.
    fn tools(&self) -> Vec<Arc<dyn ToolExecutor>>;

    /// A number that changes whenever the tools it offers change (a fixed source keeps 0): the
    /// application then assembles its registry again — between turns, never mid-request, so the
    /// request prefix stays stable within a turn.
    fn generation(&self) -> u64 {
        0
    }

    /// Resolves once the source knows its tools (its servers started, or failed); a fixed source
    /// is ready at once. Applications wait for it, for a bounded time, before the first request.
    fn ready(&self) -> futures_util::future::BoxFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }
}

/// A fixed list of tools as a source.
#[derive(Clone)]
pub struct ToolList {
    id: String,
    builtin: bool,
    tools: Vec<Arc<dyn ToolExecutor>>,
}

impl std::fmt::Debug for ToolList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolList").field("id", &self.id).field("tools", &self.tools.len()).finish()
    }
}

impl ToolList {
    /// The built-in tools (they keep their names and their order).
    pub fn builtin(id: impl Into<String>, tools: Vec<Arc<dyn ToolExecutor>>) -> Self {
        Self { id: id.into(), builtin: true, tools }
    }

    /// Tools of an extension source (namespaced by whoever made them).
    pub fn extension(id: impl Into<String>, tools: Vec<Arc<dyn ToolExecutor>>) -> Self {
        Self { id: id.into(), builtin: false, tools }
    }
}

impl ToolSource for ToolList {
    fn id(&self) -> &str {
        &self.id
    }

    fn builtin(&self) -> bool {
        self.builtin
    }

    fn tools(&self) -> Vec<Arc<dyn ToolExecutor>> {
        self.tools.clone()
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

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Input {
        path: String,
        limit: Option<u32>,
    }

    #[test]
    fn sources_assemble_in_a_stable_order_with_one_naming_rule() {
        let tool = |n: &'static str| Arc::new(Named(n, n)) as Arc<dyn ToolExecutor>;
        let sources: Vec<Arc<dyn ToolSource>> = vec![
            Arc::new(ToolList::extension("mcp:zeta", vec![tool("mcp__zeta__b"), tool("mcp__zeta__a")])),
            Arc::new(ToolList::extension("mcp:alpha", vec![tool("read"), tool("bad name")])),
            Arc::new(ToolList::builtin("builtin", vec![tool("write"), tool("read")])),
        ];
        let (r, notices) = ToolRegistry::from_sources(&sources);
        assert_eq!(r.names().collect::<Vec<_>>(), ["write", "read", "mcp__zeta__a", "mcp__zeta__b"]);
        assert_eq!(notices.len(), 2, "{notices:?}");
        assert!(notices.iter().any(|n| n.contains("`read` from mcp:alpha") && n.contains("builtin already")));
        assert!(notices.iter().any(|n| n.contains("`bad name`")));
        let (again, _) = ToolRegistry::from_sources(&sources);
        assert_eq!(again.definitions(), r.definitions(), "the same sources give the same list");
    }

    #[test]
    fn summaries_come_from_the_tool_or_its_subject() {
        struct Cmd;
        #[async_trait]
        impl ToolExecutor for Cmd {
            fn definition(&self) -> ToolDefinition {
                ToolDefinition::new("cmd", "", json!({}))
            }
            fn meta(&self) -> ToolMeta {
                ToolMeta::writes().subject(crate::spec::Subject::command("line"))
            }
            async fn execute(&self, _input: Value, _ctx: &ToolContext) -> ToolOutput {
                ToolOutput::text("")
            }
        }
        let mut r = ToolRegistry::new();
        r.register(Arc::new(Cmd)).register(Arc::new(Named("plain", "")));
        assert_eq!(r.summary("cmd", &json!({"line": "make all"})), "make all");
        assert_eq!(r.summary("plain", &json!({"x": 1})), r#"{"x":1}"#);
        assert_eq!(r.summary("nope", &json!({"x": 1})), r#"{"x":1}"#);
        assert!(r.meta("cmd").is_some_and(|m| !m.read_only));
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
            .request_approval(ApprovalRequest::new("t", "shell", json!({"command": "ls"}), "run ls"))
            .await;
        assert!(matches!(d, ApprovalDecision::Deny { .. }));
        assert_eq!(ctx.cwd(), Path::new("/tmp"));
    }
}
