//! The session's conversation: its history, id and title, the model it runs on, compaction,
//! export and a turn's summary. Rewinding it is in `rewind`.

use super::error::SessionError;
use super::handles::Conversation;
use super::state::Command;
use crate::config::{Config, EnvLookup};
use crate::credentials::CredentialStore;
use crate::factory::{build_sender, resolve};
use crate::fold::{TurnFold, TurnSummary};
use octo_agent::Message;
use tokio::sync::oneshot;

impl<'a> Conversation<'a> {
    /// A turn's summary, with what the session knows added: the cost at the current model's
    /// price, the model, the saved session's id and the turns so far.
    pub fn summarize(self, fold: &TurnFold) -> TurnSummary {
        let mut summary = fold.summary();
        let s = self.session.core.lock();
        summary.cost_usd = super::state::cost_with(s.info.price, &summary.usage, &fold.priced_apart());
        summary.model = s.model.clone();
        summary.turns = s.turns;
        (summary.session_usage, summary.session_cost_usd) = s.spent();
        drop(s);
        summary.session_id = self.id();
        summary.mcp_problems = self
            .session
            .servers()
            .mcp()
            .into_iter()
            .filter(|s| !matches!(s.state.as_str(), "ready" | "disabled"))
            .map(|s| crate::fold::McpProblem { name: s.name, status: s.state, error: s.error })
            .collect();
        summary
    }

    /// Switches endpoint or model (`endpoint`, `endpoint:model`); the conversation is kept.
    pub fn set_model(
        self,
        choice: &str,
        store: &dyn CredentialStore,
        env: EnvLookup<'_>,
    ) -> Result<String, SessionError> {
        let config = self.session.setup.config.as_ref().ok_or(SessionError::Closed)?;
        let r = match resolve(config, Some(choice), store, env) {
            // The configuration may have gained the endpoint since the session started: read it
            // again before saying it is not there.
            Err(crate::factory::EndpointError::UnknownEndpoint { .. }) => {
                let fresh = Config::load(
                    &config.home,
                    &self.session.setup.workspace,
                    env,
                    &crate::config::Overrides::default(),
                )?;
                resolve(&fresh, Some(choice), store, env)?
            }
            other => other?,
        };
        let sender = build_sender(&r, self.session.setup.http.clone())?;
        let label = r.label();
        self.session
            .commands
            .send(Command::SetSender(sender, label.clone(), r.model_info, r.max_tokens))
            .map_err(|_| SessionError::Closed)?;
        Ok(label)
    }

    /// Compacts the conversation now (`/compact [focus]`), after the running turn.
    pub fn compact(self, focus: Option<String>) -> Result<(), SessionError> {
        self.session.commands.send(Command::Compact(focus)).map_err(|_| SessionError::Closed)
    }

    /// Forgets the conversation (after the running turn).
    pub fn clear(self) -> Result<(), SessionError> {
        self.session.commands.send(Command::Clear).map_err(|_| SessionError::Closed)
    }

    /// The conversation so far (after the running turn finishes).
    pub async fn history(self) -> Result<Vec<Message>, SessionError> {
        let (tx, rx) = oneshot::channel();
        self.session.commands.send(Command::History(tx)).map_err(|_| SessionError::Closed)?;
        rx.await.map_err(|_| SessionError::Closed)
    }

    /// What fills the context window, by part (`/context`).
    pub(crate) async fn context_report(self) -> Result<super::ContextReport, SessionError> {
        let shares = match &self.session.setup.skills.prompt {
            Some((_, _, parts)) => super::context::PromptShares {
                memory: parts.memory.as_ref().map_or(0, String::len),
                skills: parts.skills.as_ref().map_or(0, String::len),
            },
            None => super::context::PromptShares::default(),
        };
        let (tx, rx) = oneshot::channel();
        self.session.commands.send(Command::Context(shares, tx)).map_err(|_| SessionError::Closed)?;
        rx.await.map_err(|_| SessionError::Closed)
    }

    /// Writes the conversation as Markdown to `path` (relative to the workspace; default
    /// `octo-<session>.md`), never over an existing file (`/export`).
    pub(crate) async fn export(
        self,
        path: Option<&str>,
    ) -> Result<(std::path::PathBuf, usize), super::ExportError> {
        let history = self.history().await?;
        if history.is_empty() {
            return Err(super::ExportError::Empty);
        }
        let name = match path.map(str::trim).filter(|p| !p.is_empty()) {
            Some(p) => std::path::PathBuf::from(p),
            None => {
                let stamp = self.id().unwrap_or_else(|| {
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_secs())
                        .to_string()
                });
                std::path::PathBuf::from(format!("octo-{stamp}.md"))
            }
        };
        let title = format!("octo conversation ({})", self.session.status().model);
        let markdown = super::export::to_markdown(&history, &title);
        let path = super::export::write(self.session.workspace(), &name, &markdown)?;
        Ok((path, history.len()))
    }

    /// Whether the current model takes images: `Some(false)` when it is known not to.
    pub fn accepts_images(self) -> Option<bool> {
        let model = self.session.core.lock().model.clone();
        octo_provider::catalog::accepts_images(model.split_once(':').map_or(model.as_str(), |(_, m)| m))
    }

    /// The model's task list as it last set it (`todo_write`); empty when it has none.
    pub fn todos(self) -> Vec<octo_tools::Todo> {
        self.session.core.lock().todos.clone()
    }

    /// Things the user should know about how the session was set up (an unavailable keyring, an
    /// ignored project setting).
    pub fn notes(self) -> &'a [String] {
        &self.session.setup.notes
    }

    /// The id of the saved session, once its first round is saved (or from the start when
    /// resumed); `None` when the session is not saved.
    pub fn id(self) -> Option<String> {
        self.session.core.session_id()
    }

    /// Gives the saved session a new title (what session lists show; at most 200 characters).
    pub fn rename(self, title: &str) -> Result<(), SessionError> {
        self.session
            .commands
            .send(Command::Title(title.trim().chars().take(200).collect()))
            .map_err(|_| SessionError::Closed)
    }
}
