//! The `task` tool and its background companion `task_output` (state, answer, cancel).

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
        vec![Arc::new(Task { spawner: Arc::clone(&spawner), depth }), Arc::new(Output { spawner })],
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
                "Run a sub-agent on a self-contained task and return its answer; the prompt is all it sees. Several in one reply run in parallel (at most {}). `background: true` returns an id for task_output.\nAgent types:{types}",
                self.spawner.limits.max_running
            ),
            json!({
                "type": "object",
                "properties": {
                    "subagent_type": {"type": "string", "description": "An agent type."},
                    "description": {"type": "string", "description": "A few words, for the user."},
                    "prompt": {"type": "string", "description": "The whole task."},
                    "background": {"type": "boolean"}
                },
                "required": ["subagent_type", "prompt"]
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
        // A child on a model of its own with a known price is priced at it.
        let price = s.models.get(&def.name).and_then(|m| m.price);
        let join =
            run_child(Arc::clone(s), agent, Arc::clone(&handle), (i.prompt, price), parent_ctx, permit);
        if i.background {
            watch_background(Arc::clone(s), Arc::clone(&handle), join);
            return ToolOutput::text(format!(
                "Started the sub-agent {id} ({}) in the background. task_output with id {id} shows how it is doing and gives its answer once done; you will also be told when it finishes.{}",
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
                "{} sub-agents are running, the most allowed at once ([subagents] max_running); wait for one (task_output) or do this yourself",
                s.limits.max_running
            )));
        };
        let Some(sender) = s.models.get(&def.name).map(|m| Arc::clone(&m.sender)).or_else(|| (s.sender)())
        else {
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
    (prompt, price): (String, Option<octo_provider::Price>),
    parent_ctx: Option<ToolContext>,
    permit: tokio::sync::OwnedSemaphorePermit,
) -> tokio::task::JoinHandle<Finished> {
    tokio::spawn(async move {
        let checkpoints = spawner.checkpoints.clone();
        let start = match &checkpoints {
            Some(r) => r.child_start().await,
            None => None,
        };
        let usage =
            child::UsageSink { price, background: &*spawner.usage, late: spawner.late_approvals.as_ref() };
        let outcome = child::run(agent, Arc::clone(&handle), prompt, parent_ctx, usage).await;
        if let Some(r) = &checkpoints {
            r.child_end(format!("sub-agent {} ({})", handle.id, handle.agent), start).await;
        }
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
                "The background sub-agent {} finished; task_output with id {} gives its answer.",
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
struct OutputInput {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    cancel: bool,
}

/// `task_output`: every sub-agent's state, or one's answer once it is done, or stopping one.
struct Output {
    spawner: Arc<Spawner>,
}

#[async_trait]
impl ToolExecutor for Output {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            "task_output",
            "A background sub-agent's answer once done, else its state (without `id`: all of them). `cancel` stops it.",
            json!({"type": "object", "properties": {"id": {"type": "string"}, "cancel": {"type": "boolean"}}}),
        )
    }

    fn meta(&self) -> ToolMeta {
        // Changes nothing on disk; a cancel must not race a read of the same child.
        ToolMeta::reads().concurrency_safe(false).aliases(&["TaskOutput", "TaskStop"])
    }

    fn summary(&self, input: &Value) -> Option<String> {
        let id = input.get("id").and_then(Value::as_str).unwrap_or("all");
        let cancel = input.get("cancel").and_then(Value::as_bool).unwrap_or(false);
        Some(if cancel { format!("cancel {id}") } else { id.to_owned() })
    }

    async fn execute(&self, input: Value, _ctx: &ToolContext) -> ToolOutput {
        let i: OutputInput = match parse_input("task_output", input) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let Some(id) = i.id.as_deref().map(str::trim).filter(|id| !id.is_empty()) else {
            if i.cancel {
                return ToolOutput::error("`cancel` needs the `id` of the sub-agent to stop");
            }
            return states(&self.spawner.children());
        };
        let Some(c) = self.spawner.lock().iter().find(|c| c.id == id).cloned() else {
            return ToolOutput::error(format!(
                "there is no sub-agent `{id}`; task_output without an id lists them"
            ));
        };
        let info = c.info();
        match info.state {
            ChildState::Running if i.cancel => {
                c.cancel.cancel();
                ToolOutput::text(format!("Cancelling {id}."))
            }
            _ if i.cancel => ToolOutput::text(format!("{id} is not running")),
            ChildState::Running => ToolOutput::text(format!(
                "{} — still running; check again later or do something else meanwhile",
                state_line(&info)
            )),
            ChildState::Done(text) => ToolOutput::text(text),
            ChildState::Failed(e) => ToolOutput::error(format!("{id} ended without an answer: {e}")),
        }
    }
}

/// One line per sub-agent: what it does, its state, its calls and time.
fn states(all: &[super::record::ChildInfo]) -> ToolOutput {
    if all.is_empty() {
        return ToolOutput::text("No sub-agents have run in this session.");
    }
    ToolOutput::text(all.iter().map(state_line).collect::<Vec<_>>().join("\n"))
}

fn state_line(c: &super::record::ChildInfo) -> String {
    let state = match &c.state {
        ChildState::Running => "running".to_owned(),
        ChildState::Done(_) => "done (task_output with its id gives the answer)".to_owned(),
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
}
