//! The `task` tool and its background companions `task_status`, `task_result`, `task_cancel`.

use super::child;
use super::record::{Child, ChildState};
use super::spawner::Spawner;
use async_trait::async_trait;
use octo_agent::{parse_input, ToolContext, ToolDefinition, ToolExecutor, ToolList, ToolMeta, ToolOutput};
use serde_json::{json, Value};
use std::sync::Arc;

/// The sub-agent tools for a parent at `depth` (0: the session's own agent), as a source.
pub fn tools(spawner: Arc<Spawner>, depth: u32) -> ToolList {
    ToolList::extension(
        "subagents",
        vec![
            Arc::new(Task { spawner: Arc::clone(&spawner), depth }),
            Arc::new(Status { spawner: Arc::clone(&spawner) }),
            Arc::new(Result_ { spawner: Arc::clone(&spawner) }),
            Arc::new(Cancel { spawner }),
        ],
    )
}

struct Task {
    spawner: Arc<Spawner>,
    depth: u32,
}

#[derive(serde::Deserialize)]
struct TaskInput {
    subagent_type: String,
    #[serde(default)]
    description: String,
    prompt: String,
    #[serde(default)]
    background: bool,
}

#[async_trait]
impl ToolExecutor for Task {
    fn definition(&self) -> ToolDefinition {
        let mut types = String::new();
        for a in self.spawner.agents.iter() {
            types.push_str(&format!(
                "\n- {}: {}",
                a.name,
                a.description.split_whitespace().collect::<Vec<_>>().join(" ")
            ));
        }
        ToolDefinition::new(
            "task",
            format!(
                "Starts a sub-agent with its own context to do a self-contained task, and returns its final answer. Use it to search or work in parallel (several task calls in one reply run at once) or to keep long explorations out of your context. Give a complete, precise prompt: the sub-agent sees nothing else. With background: true it returns an id at once; check it with task_status, get its answer with task_result. At most {} run at once.\nAgent types:{types}",
                self.spawner.limits.max_running
            ),
            json!({
                "type": "object",
                "properties": {
                    "subagent_type": {"type": "string", "description": "One of the agent types listed."},
                    "description": {"type": "string", "description": "A few words on the task, for the user."},
                    "prompt": {"type": "string", "description": "The whole task for the sub-agent."},
                    "background": {"type": "boolean", "description": "Return at once and let it run (default false)."}
                },
                "required": ["subagent_type", "prompt"],
                "additionalProperties": false
            }),
        )
    }

    fn meta(&self) -> ToolMeta {
        // The call itself changes nothing: each of the child's calls is checked on its own. It may
        // join a parallel batch, so several children run at once.
        ToolMeta::reads()
    }

    fn summary(&self, input: &Value) -> Option<String> {
        let t = input.get("subagent_type").and_then(Value::as_str).unwrap_or("?");
        let d = input.get("description").and_then(Value::as_str).unwrap_or("");
        Some(format!("{t}: {d}"))
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let i: TaskInput = match parse_input("task", input) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let (def, permit, sender) = match self.admit(&i) {
            Ok(admitted) => admitted,
            Err(refusal) => return refusal,
        };
        let s = &self.spawner;
        let nested = {
            let (s, depth) = (Arc::clone(s), self.depth + 1);
            move || tools(s, depth)
        };
        let (agent, notes) = child::build(s, &def, sender, self.depth, nested);
        let description = if i.description.trim().is_empty() {
            i.prompt.lines().next().unwrap_or("").chars().take(60).collect()
        } else {
            i.description.trim().to_owned()
        };
        // Foreground children end with the parent's turn; background ones with the session.
        let cancel = if i.background {
            tokio_util::sync::CancellationToken::new()
        } else {
            ctx.cancel().child_token()
        };
        let handle =
            Arc::new(Child::new(s.next_id(&def.name), &def.name, &description, i.background, cancel));
        s.lock().push(Arc::clone(&handle));
        let parent_ctx = (!i.background).then(|| ctx.clone());
        let join = run_child(Arc::clone(s), agent, Arc::clone(&handle), i.prompt, parent_ctx, permit);
        if i.background {
            watch_background(Arc::clone(s), Arc::clone(&handle), join);
            return ToolOutput::text(format!(
                "Started the sub-agent {id} ({}) in the background. task_status shows how it is doing and task_result {id} gives its answer once done; you will also be told when it finishes.{}",
                def.name,
                notes_text(&notes),
                id = handle.id
            ));
        }
        foreground_result(&handle, join.await, &notes)
    }
}

impl Task {
    /// Whether a child of the asked type may start now: the type exists, the depth and the
    /// number running allow it, there is a prompt and a model. The refusal says what to do.
    fn admit(
        &self,
        i: &TaskInput,
    ) -> Result<
        (octo_skills::AgentDef, tokio::sync::OwnedSemaphorePermit, Arc<dyn octo_agent::Sender>),
        ToolOutput,
    > {
        let s = &self.spawner;
        let Some(def) = s.agents.get(i.subagent_type.trim()) else {
            return Err(ToolOutput::error(format!(
                "there is no agent type `{}`; the types are: {}",
                i.subagent_type,
                s.agents.names().join(", ")
            )));
        };
        if self.depth >= s.limits.max_depth {
            return Err(ToolOutput::error(format!(
                "sub-agents may nest {} level(s) deep ([subagents] max_depth), so this one cannot start another; do the task yourself",
                s.limits.max_depth
            )));
        }
        if i.prompt.trim().is_empty() {
            return Err(ToolOutput::error("`prompt` is empty: give the sub-agent its whole task"));
        }
        let Ok(permit) = Arc::clone(&s.running).try_acquire_owned() else {
            return Err(ToolOutput::error(format!(
                "{} sub-agents are running, the most allowed at once ([subagents] max_running); wait for one (task_status) or do this yourself",
                s.limits.max_running
            )));
        };
        let Some(sender) = s.models.get(&def.name).cloned().or_else(|| (s.sender)()) else {
            return Err(ToolOutput::error("no model to run the sub-agent on"));
        };
        Ok((def.clone(), permit, sender))
    }
}

/// What a child's task hands back: its outcome and where its history was saved.
type Finished = (child::Outcome, Option<std::path::PathBuf>);

/// Runs the child on a task of its own (a panic in it ends that task, not the parent's turn).
fn run_child(
    spawner: Arc<Spawner>,
    agent: octo_agent::Agent,
    handle: Arc<Child>,
    prompt: String,
    parent_ctx: Option<ToolContext>,
    permit: tokio::sync::OwnedSemaphorePermit,
) -> tokio::task::JoinHandle<Finished> {
    tokio::spawn(async move {
        let outcome = child::run(agent, Arc::clone(&handle), prompt, parent_ctx).await;
        // Recorded here too, so a child whose parent stopped waiting is not "running" forever.
        handle.finish(match &outcome.result {
            Ok(t) => ChildState::Done(t.clone()),
            Err(e) => ChildState::Failed(e.clone()),
        });
        let path = child::save_sidechain(&spawner, &handle.id, &outcome.history);
        drop(permit);
        (outcome, path)
    })
}

/// A background child: when it ends, its state is recorded and the model is told with the next
/// prompt.
fn watch_background(spawner: Arc<Spawner>, handle: Arc<Child>, join: tokio::task::JoinHandle<Finished>) {
    tokio::spawn(async move {
        let state = match join.await {
            Ok((o, _)) => match o.result {
                Ok(text) => ChildState::Done(text),
                Err(e) => ChildState::Failed(e),
            },
            Err(e) => ChildState::Failed(format!("the sub-agent crashed: {e}")),
        };
        let note = match &state {
            ChildState::Done(_) => format!(
                "The background sub-agent {} finished; task_result with id {} gives its answer.",
                handle.id, handle.id
            ),
            ChildState::Failed(e) => {
                format!("The background sub-agent {} ended without an answer: {e}", handle.id)
            }
            ChildState::Running => String::new(),
        };
        handle.finish(state);
        (spawner.notify)(note);
    });
}

/// A foreground child's answer as the `task` call's result.
fn foreground_result(
    handle: &Child,
    joined: Result<Finished, tokio::task::JoinError>,
    notes: &[String],
) -> ToolOutput {
    let id = &handle.id;
    match joined {
        Ok((o, path)) => {
            let saved = path.map(|p| format!("\n(its history: {})", p.display())).unwrap_or_default();
            match o.result {
                Ok(text) => {
                    handle.finish(ChildState::Done(text.clone()));
                    let u = o.usage;
                    let tokens =
                        u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens;
                    ToolOutput::text(format!(
                        "{text}\n\n[sub-agent {id}: {} tool call(s), {tokens} tokens{}]{saved}",
                        o.tool_calls,
                        notes_text(notes)
                    ))
                }
                Err(e) => {
                    handle.finish(ChildState::Failed(e.clone()));
                    ToolOutput::error(format!("sub-agent {id}: {e}{saved}"))
                }
            }
        }
        Err(e) => {
            let why = format!("the sub-agent crashed: {e}");
            handle.finish(ChildState::Failed(why.clone()));
            ToolOutput::error(format!("sub-agent {id}: {why}"))
        }
    }
}

fn notes_text(notes: &[String]) -> String {
    if notes.is_empty() {
        String::new()
    } else {
        format!(" Notes: {}", notes.join("; "))
    }
}

#[derive(serde::Deserialize)]
struct IdInput {
    #[serde(default)]
    id: Option<String>,
}

fn find(spawner: &Spawner, id: &str) -> Option<Arc<Child>> {
    spawner.lock().iter().find(|c| c.id == id.trim()).cloned()
}

struct Status {
    spawner: Arc<Spawner>,
}

#[async_trait]
impl ToolExecutor for Status {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            "task_status",
            "Shows the sub-agents of this session (or the one with `id`): running, done or failed, tool calls, time.",
            json!({"type": "object", "properties": {"id": {"type": "string"}}, "additionalProperties": false}),
        )
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::reads()
    }

    async fn execute(&self, input: Value, _ctx: &ToolContext) -> ToolOutput {
        let i: IdInput = match parse_input("task_status", input) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let all = self.spawner.children();
        let list: Vec<_> =
            all.iter().filter(|c| i.id.as_deref().is_none_or(|id| c.id == id.trim())).collect();
        if list.is_empty() {
            return match i.id {
                Some(id) => ToolOutput::error(format!("there is no sub-agent `{id}`")),
                None => ToolOutput::text("No sub-agents have run in this session."),
            };
        }
        let lines: Vec<String> = list
            .iter()
            .map(|c| {
                let state = match &c.state {
                    ChildState::Running => "running".to_owned(),
                    ChildState::Done(_) => "done (task_result gives its answer)".to_owned(),
                    ChildState::Failed(e) => format!("failed: {e}"),
                };
                format!(
                    "- {} ({}{}): {} — {state}; {} tool call(s), {:.1}s",
                    c.id,
                    c.agent,
                    if c.background { ", background" } else { "" },
                    c.description,
                    c.tool_calls,
                    c.seconds
                )
            })
            .collect();
        ToolOutput::text(lines.join("\n"))
    }
}

#[allow(non_camel_case_types)]
struct Result_ {
    spawner: Arc<Spawner>,
}

#[async_trait]
impl ToolExecutor for Result_ {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            "task_result",
            "The final answer of a background sub-agent, once it is done.",
            json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"], "additionalProperties": false}),
        )
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::reads()
    }

    async fn execute(&self, input: Value, _ctx: &ToolContext) -> ToolOutput {
        let i: IdInput = match parse_input("task_result", input) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let id = i.id.unwrap_or_default();
        let Some(c) = find(&self.spawner, &id) else {
            return ToolOutput::error(format!("there is no sub-agent `{id}`; task_status lists them"));
        };
        match c.info().state {
            ChildState::Running => ToolOutput::text(format!(
                "{id} is still running; check again later or do something else meanwhile"
            )),
            ChildState::Done(text) => ToolOutput::text(text),
            ChildState::Failed(e) => ToolOutput::error(format!("{id} ended without an answer: {e}")),
        }
    }
}

struct Cancel {
    spawner: Arc<Spawner>,
}

#[async_trait]
impl ToolExecutor for Cancel {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            "task_cancel",
            "Stops a running background sub-agent.",
            json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"], "additionalProperties": false}),
        )
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::reads().concurrency_safe(false)
    }

    async fn execute(&self, input: Value, _ctx: &ToolContext) -> ToolOutput {
        let i: IdInput = match parse_input("task_cancel", input) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let id = i.id.unwrap_or_default();
        let Some(c) = find(&self.spawner, &id) else {
            return ToolOutput::error(format!("there is no sub-agent `{id}`; task_status lists them"));
        };
        if c.info().state != ChildState::Running {
            return ToolOutput::text(format!("{id} is not running"));
        }
        c.cancel.cancel();
        ToolOutput::text(format!("Cancelling {id}."))
    }
}
