//! The session's core, made before anything else: the channel its events go out on, the state
//! its task and its handles share, and the saved session's id. Every start step that needs to
//! report, or to read the current model, is handed this core; nothing is filled in later.

use super::options::State;
use octo_agent::{AgentEvent, CancellationToken, Message, Sender, Usage};
use octo_provider::ModelInfo;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tokio::sync::{broadcast, oneshot};

/// How many events a slow subscriber may fall behind before it misses some: seconds of a fast
/// stream (a consumer that waits on something else, as a chat bridge on a rate limit, drains the
/// channel into a queue of its own). The channel allocates and writes every slot when the
/// session starts (an event is 256 bytes), so this is also what each session costs: 4,096 slots
/// are about 1 MB (16,384 were 4.5 MB, a fifth of a one-shot's whole footprint).
const EVENT_BUFFER: usize = 4 * 1024;

/// The cost of `usage` at `price`, where the part `apart` of it costs `apart_cost` instead
/// (children on models of their own).
pub(crate) fn cost_with(
    price: Option<octo_provider::Price>,
    usage: &Usage,
    apart: &(Usage, f64),
) -> Option<f64> {
    price.map(|p| p.cost(usage) - p.cost(&apart.0) + apart.1)
}

/// What the task and the handles share.
pub(super) struct Shared {
    pub state: State,
    pub turns: u32,
    pub usage: Usage,
    /// Children's tokens (part of `usage`) priced at their own model's rate, and that cost.
    pub priced_apart: (Usage, f64),
    /// What a resumed session had spent before this run (tokens, and their cost when known);
    /// not part of `usage`, so the spending limit counts this run alone.
    pub earlier: (Usage, Option<f64>),
    pub model: String,
    pub info: ModelInfo,
    pub queued: usize,
    pub current: Option<CancellationToken>,
    /// Closed for good: queued prompts are dropped.
    pub closed: bool,
    /// What the last request filled of the context window.
    pub context_tokens: u64,
    /// The model's task list, as its last `todos` update left it.
    pub todos: Vec<octo_tools::Todo>,
    /// The tools the model has now.
    pub tool_names: Vec<String>,
    /// What happened since the last prompt that the model should hear of (`/remember`, a
    /// background sub-agent finishing), told with the next one rather than by changing the
    /// system prompt.
    pub pending_notes: Vec<String>,
    /// The model the session talks to now (for one-off requests such as a dream).
    pub sender: Option<Arc<dyn Sender>>,
}

impl Shared {
    /// What the session has spent in all, a resumed one's earlier runs included: tokens, and
    /// their cost when the price is known.
    pub(super) fn spent(&self) -> (Usage, Option<f64>) {
        let mut usage = self.usage;
        usage += self.earlier.0;
        let cost = cost_with(self.info.price, &self.usage, &self.priced_apart)
            .map(|c| c + self.earlier.1.unwrap_or(0.0))
            .or(self.earlier.1.filter(|_| self.usage == Usage::default()));
        (usage, cost)
    }
}

/// The session's core: its events, its shared state, its saved id.
#[derive(Clone)]
pub(super) struct Core {
    pub events: broadcast::Sender<AgentEvent>,
    pub shared: Arc<Mutex<Shared>>,
    /// The saved session's id, once its first round is saved (or from the start when resumed).
    pub session_id: Arc<Mutex<Option<String>>>,
    /// The agent's approval broker, once the agent exists: approvals asked for between turns (a
    /// background sub-agent's) wait in it, so the front ends answer them as any other.
    pub broker: Arc<std::sync::OnceLock<Arc<octo_agent::ApprovalBroker>>>,
    /// The id a new saved session is going to be saved under, chosen at start so that what is
    /// named after the session before its first save (hooks' `session_id`, the event log) has
    /// its name.
    pub planned_id: Arc<std::sync::OnceLock<String>>,
    /// What hooks are told of the session beyond its id: set once the permission engine exists.
    pub hook_view: Arc<std::sync::OnceLock<HookView>>,
}

/// The session as its hooks see it: its permission mode (read when a hook runs) and its
/// reasoning effort.
pub(super) struct HookView {
    /// The mode now.
    pub mode: Box<dyn Fn() -> crate::permissions::Mode + Send + Sync>,
    /// The effort, as its name.
    pub effort: String,
}

impl Core {
    /// Lets the hooks see the session's permission mode (as it is when they run) and effort.
    pub(crate) fn show_hooks(
        &self,
        engine: &Arc<crate::permissions::PermissionEngine>,
        effort: octo_agent::ReasoningEffort,
    ) {
        let seen = Arc::clone(engine);
        let _ =
            self.hook_view.set(HookView { mode: Box::new(move || seen.mode()), effort: effort.to_string() });
    }

    /// A core for a session on `model` (`endpoint:model`) through `sender`.
    pub(crate) fn new(model: String, info: ModelInfo, sender: Arc<dyn Sender>) -> Self {
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        let shared = Shared {
            state: State::Idle,
            turns: 0,
            usage: Usage::default(),
            priced_apart: (Usage::default(), 0.0),
            earlier: (Usage::default(), None),
            model,
            info,
            queued: 0,
            current: None,
            closed: false,
            context_tokens: 0,
            todos: Vec::new(),
            tool_names: Vec::new(),
            pending_notes: Vec::new(),
            sender: Some(sender),
        };
        Self {
            events,
            shared: Arc::new(Mutex::new(shared)),
            session_id: Arc::new(Mutex::new(None)),
            broker: Arc::new(std::sync::OnceLock::new()),
            planned_id: Arc::new(std::sync::OnceLock::new()),
            hook_view: Arc::new(std::sync::OnceLock::new()),
        }
    }

    /// The shared state (a poisoned lock is taken over: the state stays usable).
    pub(crate) fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Tells the front ends something (nobody listening is fine).
    pub(crate) fn notice(&self, message: String) {
        let _ = self.events.send(AgentEvent::Notice { message });
    }

    /// The saved session's id.
    pub(crate) fn session_id(&self) -> Option<String> {
        self.session_id.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The saved session's id, or the one it is going to be saved under.
    pub(crate) fn known_id(&self) -> Option<String> {
        self.session_id().or_else(|| self.planned_id.get().cloned())
    }

    /// The model the session talks to now.
    pub(crate) fn current_sender(&self) -> Option<Arc<dyn Sender>> {
        self.lock().sender.clone()
    }

    /// Leaves a note for the model, told with the next prompt.
    pub(crate) fn leave_note(&self, note: String) {
        self.lock().pending_notes.push(note);
    }

    /// Asks the front ends, between turns, to approve `request` (a background sub-agent's call):
    /// the request and its answer go out as events, the answer comes through the session's
    /// approval calls. `None` when nobody can answer (no agent yet, the session ended).
    pub(crate) async fn ask_between_turns(
        &self,
        request: octo_agent::ApprovalRequest,
    ) -> Option<octo_agent::ApprovalDecision> {
        let broker = Arc::clone(self.broker.get()?);
        let (id, rx) = broker.register_pending();
        let _ = self.events.send(AgentEvent::ApprovalRequired { approval_id: id.clone(), request });
        // However the wait ends, the id leaves the pending set.
        struct Forget<'a>(&'a octo_agent::ApprovalBroker, &'a str);
        impl Drop for Forget<'_> {
            fn drop(&mut self) {
                self.0.forget_pending(self.1);
            }
        }
        let _forget = Forget(&broker, &id);
        let decision = rx.await.ok()?;
        let _ = self
            .events
            .send(AgentEvent::ApprovalResolved { approval_id: id.clone(), decision: decision.clone() });
        Some(decision)
    }

    /// Counts a turn as ended; returns what the session has spent in all so far.
    pub(super) fn end_turn(&self) -> (Usage, Option<f64>) {
        let mut s = self.lock();
        s.turns += 1;
        s.spent()
    }

    /// Takes a sub-agent's tokens into the session's; `cost` when they are priced at the child's
    /// own model's rate.
    pub(crate) fn add_child_usage(&self, u: Usage, cost: Option<f64>) {
        let mut s = self.lock();
        s.usage += u;
        if let Some(c) = cost {
            s.priced_apart.0 += u;
            s.priced_apart.1 += c;
        }
    }
}

/// What the session's task is asked to do, one at a time.
pub(super) enum Command {
    /// A prompt, and the narrowing of its turn (a skill's or command's `allowed-tools`).
    /// With the model the turn runs on when not the session's (a command's `model:`).
    Prompt(Message, Option<crate::permissions::Scope>, Option<Arc<crate::turn_models::TurnModel>>),
    SystemPrompt(String),
    Compact(Option<String>),
    Title(String),
    SetSender(Arc<dyn Sender>, String, ModelInfo, Option<u32>),
    History(oneshot::Sender<Vec<Message>>),
    /// What fills the context window (the system prompt's memory and skills shares given).
    Context(super::context::PromptShares, oneshot::Sender<super::context::ContextReport>),
    /// Keeps the first `keep` messages (when the history still has at least `expect`).
    /// With `fork`, the saved conversation is first copied whole to a new session; the reply
    /// says whether it was kept and the fork's id.
    Truncate {
        keep: usize,
        expect: usize,
        fork: bool,
        reply: oneshot::Sender<(bool, Option<String>)>,
    },
    Clear,
}
