//! One child agent: its permission gate (the parent's engine, narrowed), its tools (the parent's,
//! filtered by its type), and its run — approvals forwarded to the parent's front end, progress
//! reported as tool updates, the outcome turned into a result.

use super::record::{
    Child, SubagentProgress, SubagentStep, COST_FIELD, PROGRESS_UPDATE, TASK_TOOLS, USAGE_UPDATE,
};
use super::spawner::Spawner;
use crate::permissions::{PermissionEngine, Scope};
use futures_util::StreamExt;
use octo_agent::{
    Agent, AgentEvent, ApprovalDecision, DenyKind, Message, PermissionDecision, PermissionGate,
    PermissionQuery, ToolContext, ToolRegistry, TurnEndReason, Usage,
};
use octo_skills::AgentDef;
use serde_json::json;
use std::sync::Arc;

/// The parent's engine with the child's narrowing: its type's tool list (a scope) and a plan mode
/// of its own. Never wider than the parent: every call still goes through the parent's check.
struct ChildGate {
    engine: Arc<PermissionEngine>,
    /// The child type's scope, and the narrowings active when it started (a skill's), kept for
    /// its whole run even after the parent's turn ends.
    scopes: Vec<Scope>,
    plan: bool,
}

impl PermissionGate for ChildGate {
    fn check(&self, q: &PermissionQuery<'_>) -> PermissionDecision {
        if self.plan && !q.meta.read_only {
            return PermissionDecision::Deny {
                message: format!(
                    "this sub-agent runs in plan mode: only read-only tools may run, so `{}` was not run",
                    q.tool
                ),
                kind: DenyKind::PlanMode,
            };
        }
        self.engine.check_within_all(q, &self.scopes)
    }

    fn remember(&self, q: &PermissionQuery<'_>, decision: &ApprovalDecision) {
        self.engine.remember(q, decision);
    }
}

/// The tools a child of type `def` gets from the parent's, and the notes about names its file
/// gives that octo lacks. `nested` keeps the task tools (the depth limit allows one more level).
pub(crate) fn child_tools(
    def: &AgentDef,
    parent: &ToolRegistry,
) -> (ToolRegistry, Option<Scope>, Vec<String>) {
    let mut notes = Vec::new();
    let read_only = def.tools.as_deref() == Some(&["@read-only".to_owned()][..]);
    let (allowed, scope): (Option<Vec<String>>, Option<Scope>) = match &def.tools {
        Some(_) if read_only => (None, None),
        Some(list) => {
            let mut names = Vec::new();
            for entry in list {
                match octo_tools::claude::rules_for(entry) {
                    Ok(rules) => {
                        names.extend(rules.iter().map(|r| r.split('(').next().unwrap_or(r).to_owned()));
                    }
                    Err(e) => notes.push(format!("agent `{}`: tools {e}; it is left out", def.name)),
                }
            }
            let (scope, more) = Scope::from_allowed_tools(&format!("the agent `{}`", def.name), list);
            notes.extend(more);
            (Some(names), Some(scope))
        }
        None => (None, None),
    };
    let denied: Vec<String> = def
        .disallowed_tools
        .iter()
        .filter_map(|e| octo_tools::claude::rules_for(e).ok())
        .flatten()
        .map(|r| r.split('(').next().unwrap_or(&r).to_owned())
        .collect();
    let mut out = ToolRegistry::new();
    for (name, exec) in parent.names().zip(parent.executors()) {
        let keep = if TASK_TOOLS.contains(&name) || name == octo_skills::SKILL_TOOL {
            // A child's own task tools are added by `build` (one level deeper) when allowed; a
            // child loads no skills (a skill's narrowing belongs to the parent's turn).
            false
        } else {
            let meta_ok = !read_only || parent.meta(name).is_some_and(|m| m.read_only);
            meta_ok
                && allowed.as_ref().is_none_or(|a| a.iter().any(|t| t == name))
                && !denied.iter().any(|t| t == name)
        };
        if keep {
            out.register(Arc::clone(exec));
        }
    }
    (out, scope, notes)
}

/// What a child's run came to.
pub(crate) struct Outcome {
    pub result: Result<String, String>,
    pub usage: Usage,
    pub tool_calls: u32,
    pub history: Vec<Message>,
}

/// Builds the child's agent.
pub(crate) fn build(
    spawner: &Arc<Spawner>,
    def: &AgentDef,
    sender: Arc<dyn octo_agent::Sender>,
    depth: u32,
    nested_tools: impl FnOnce() -> octo_agent::ToolList,
) -> (Agent, Vec<String>) {
    let parent = spawner.tools.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
    let nested = depth + 1 < spawner.limits.max_depth;
    let (mut tools, scope, notes) = child_tools(def, &parent);
    let plan = def.permission_mode.as_deref().is_some_and(|m| m.eq_ignore_ascii_case("plan"));
    let read_only = def.tools.as_deref() == Some(&["@read-only".to_owned()][..]);
    let mut scopes = spawner.engine.scopes();
    scopes.extend(scope);
    // Only a child as free as its parent may start children of its own: a grandchild's gate is
    // the session's engine and its own type, so a narrowed child must not hand work down.
    if nested && scopes.is_empty() && !plan && !read_only {
        for exec in octo_agent::ToolSource::tools(&nested_tools()) {
            tools.register(exec);
        }
    }
    let gate = Arc::new(ChildGate { engine: Arc::clone(&spawner.engine), scopes, plan });
    let turns = def.max_turns.map_or(spawner.limits.max_turns, |t| t.min(spawner.limits.max_turns));
    let prompt = format!(
        "{}\n\n# Environment\n- Working directory: {}\n- You are a sub-agent: your final answer goes back to the agent that started you.",
        def.prompt.trim(),
        spawner.workspace.display()
    );
    let mut builder = Agent::builder(sender);
    for p in &spawner.plugins {
        builder = builder.plugin(Arc::clone(p));
    }
    let agent = builder
        .tools(tools)
        .permission_gate(gate)
        .system_prompt(prompt)
        .cwd(spawner.workspace.clone())
        .max_turns(turns)
        .build();
    (agent, notes)
}

/// Where a child's token usage goes: to the parent's turn as a tool update (with its cost when
/// the child's model has a price of its own), or, for a background child whose parent's turn
/// ended, straight into the session.
pub(crate) struct UsageSink<'a> {
    /// The child's model's own price, when it runs on another model with a known price.
    pub price: Option<octo_provider::Price>,
    /// The session, for a background child.
    pub background: &'a (dyn Fn(Usage, Option<f64>) + Send + Sync),
    /// Asks the front ends between turns, for a background child's approvals.
    pub late: Option<&'a super::spawner::LateApprovals>,
}

impl UsageSink<'_> {
    fn report(&self, ctx: Option<&ToolContext>, u: Usage) {
        let cost = self.price.map(|p| p.cost(&u));
        match ctx {
            Some(c) => {
                let mut data = serde_json::to_value(u).unwrap_or_default();
                if let (Some(cost), Some(obj)) = (cost, data.as_object_mut()) {
                    obj.insert(COST_FIELD.into(), json!(cost));
                }
                c.emit_update(USAGE_UPDATE, data);
            }
            None => (self.background)(u, cost),
        }
    }
}

/// The answer to a child's approval request: the parent's front end during the parent's turn,
/// the front ends between turns for a background child when they answer then, else denied.
async fn settle_approval(
    ctx: Option<&ToolContext>,
    late: Option<&super::spawner::LateApprovals>,
    child: &Child,
    mut request: octo_agent::ApprovalRequest,
) -> ApprovalDecision {
    let nobody = || ApprovalDecision::Deny {
        message: Some("nobody can approve a background sub-agent's calls".into()),
    };
    match (ctx, late) {
        (Some(c), _) => {
            request.summary = format!("[sub-agent {}] {}", child.id, request.summary);
            c.ask_approval(request).await.0
        }
        (None, Some(ask)) => {
            request.summary = format!("[background sub-agent {}] {}", child.id, request.summary);
            tokio::select! {
                d = ask(request) => d.unwrap_or_else(nobody),
                () = child.cancel.cancelled() => nobody(),
            }
        }
        (None, None) => nobody(),
    }
}

/// Runs the child to the end of its one turn. With a parent context, approvals and questions go
/// to the parent's front end (labelled with the child's id) and progress is reported there;
/// without one (a background child after its parent's turn), approvals are denied.
pub(crate) async fn run(
    mut agent: Agent,
    child: Arc<Child>,
    prompt: String,
    ctx: Option<ToolContext>,
    usage_sink: UsageSink<'_>,
) -> Outcome {
    let broker = agent.approvals();
    let cancel = child.cancel.clone();
    let mut usage = Usage::default();
    let mut error = None;
    let mut reason = TurnEndReason::Failed;
    let update = |ctx: &Option<ToolContext>, step: SubagentStep| {
        if let Some(c) = ctx {
            let progress = SubagentProgress { id: child.id.clone(), agent: child.agent.clone(), step };
            c.emit_update(PROGRESS_UPDATE, serde_json::to_value(progress).unwrap_or_default());
        }
    };
    update(&ctx, SubagentStep::Start { description: child.description.clone() });
    {
        let input = Message::user(prompt);
        // A background child asks between turns when a front end answers then.
        let mut stream = if ctx.is_some() || usage_sink.late.is_some() {
            agent.turn_stream(input, cancel.clone())
        } else {
            agent.turn_stream_unattended(input, cancel.clone())
        };
        while let Some(ev) = stream.next().await {
            match ev {
                AgentEvent::ApprovalRequired { approval_id, request } => {
                    let decision = settle_approval(ctx.as_ref(), usage_sink.late, &child, request).await;
                    let _ = broker.resolve(&approval_id, decision);
                }
                AgentEvent::QuestionAsked { question_id, question, options, .. } => {
                    let answer = match &ctx {
                        Some(c) => {
                            c.ask_user(&format!("[sub-agent {}] {question}", child.id), &options).await
                        }
                        None => None,
                    };
                    match answer {
                        Some(a) => {
                            let _ = broker.answer(&question_id, a);
                        }
                        // Nobody could answer: the child hears so, not an empty answer.
                        None => broker.decline_question(&question_id),
                    }
                }
                AgentEvent::ToolCallStart { name, summary, .. } => {
                    let n = child.count_call();
                    update(&ctx, SubagentStep::Tool { tool: name, summary, tool_calls: n });
                }
                AgentEvent::Usage { usage: u } => {
                    usage += u;
                    usage_sink.report(ctx.as_ref(), u);
                }
                AgentEvent::Error { message, .. } => error = Some(message),
                AgentEvent::TurnEnd { reason: r, .. } => reason = r,
                _ => {}
            }
        }
    }
    let history = agent.history().to_vec();
    let last = history
        .iter()
        .rev()
        .find(|m| m.role == octo_agent::Role::Assistant)
        .map(Message::text)
        .unwrap_or_default();
    let turns = agent.config().max_turns;
    let result = match reason {
        TurnEndReason::Completed if !last.trim().is_empty() => Ok(last),
        TurnEndReason::Completed => Err("the sub-agent finished without an answer".to_owned()),
        TurnEndReason::MaxTurns => Err(format!(
            "the sub-agent stopped at its turn cap ({turns} model requests) before finishing{}",
            if last.trim().is_empty() { String::new() } else { format!("; its last words: {}", last.trim()) }
        )),
        TurnEndReason::Cancelled => Err("the sub-agent was cancelled".to_owned()),
        TurnEndReason::BudgetExceeded => {
            Err("the sub-agent was stopped by the session's spending limit (max_cost)".to_owned())
        }
        TurnEndReason::LoopDetected => {
            Err("the sub-agent kept repeating the same calls and was stopped".to_owned())
        }
        TurnEndReason::Failed => {
            Err(format!("the sub-agent failed: {}", error.unwrap_or_else(|| "unknown error".into())))
        }
    };
    let tool_calls = child.info().tool_calls;
    update(&ctx, SubagentStep::End { ok: result.is_ok(), tool_calls });
    Outcome { result, usage, tool_calls, history }
}

/// Saves a child's history as JSON lines beside its parent session (when the parent is saved).
pub(crate) fn save_sidechain(spawner: &Spawner, id: &str, history: &[Message]) -> Option<std::path::PathBuf> {
    let s = spawner.sidechains.as_ref()?;
    let parent = s.parent.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()?;
    let dir = s.dir.join("sidechains").join(parent);
    octo_session::private::create_dir(&dir).ok()?;
    let mut text = String::new();
    for m in history {
        text.push_str(&serde_json::to_string(m).ok()?);
        text.push('\n');
    }
    let (path, mut f) = create_unique(&dir, id)?;
    std::io::Write::write_all(&mut f, text.as_bytes()).ok()?;
    Some(path)
}

/// A new file `ID.jsonl` in `dir`, or `ID-2.jsonl`, `ID-3.jsonl`… when the name is taken: a
/// resumed session numbers its children from 1 again, and an earlier child's history must be
/// neither overwritten nor silently left unsaved.
fn create_unique(dir: &std::path::Path, id: &str) -> Option<(std::path::PathBuf, std::fs::File)> {
    let name = |n: u32| if n == 0 { format!("{id}.jsonl") } else { format!("{id}-{}.jsonl", n + 1) };
    octo_session::private::create_first_free(dir, name, 10_000)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    #[test]
    fn a_taken_sidechain_name_gets_a_number_and_nothing_is_overwritten() {
        let d = tempfile::tempdir().unwrap();
        let (a, _) = super::create_unique(d.path(), "general-1").unwrap();
        std::fs::write(&a, "first child\n").unwrap();
        let (b, _) = super::create_unique(d.path(), "general-1").unwrap();
        let (c, _) = super::create_unique(d.path(), "general-1").unwrap();
        assert_eq!(a.file_name().unwrap(), "general-1.jsonl");
        assert_eq!(b.file_name().unwrap(), "general-1-2.jsonl");
        assert_eq!(c.file_name().unwrap(), "general-1-3.jsonl");
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "first child\n");
    }
}
