//! Saving and resuming: the session store opened for a saved session, and a resumed history
//! loaded (refused when it belongs to another directory).

use super::error::SessionError;
use super::options::SessionOptions;
use crate::config::Config;
use crate::factory::Resolved;
use octo_agent::Message;
use std::sync::Arc;

/// Opens the session store for saving or resuming, and loads a resumed history.
pub(super) fn open(
    config: &Config,
    options: &SessionOptions,
    workspace: &std::path::Path,
    resolved: &Resolved,
    core: &super::state::Core,
    notes: &mut Vec<String>,
) -> Result<Resumed, SessionError> {
    if !options.save && options.resume.is_none() {
        return Ok(Resumed::default());
    }
    let mut p = crate::persist::Persist {
        store: octo_session::SessionStore::new(crate::home::Home::new(&config.home).sessions()),
        writer: None,
        cwd: workspace.to_path_buf(),
        endpoint: resolved.endpoint.clone(),
        model: resolved.model.clone(),
        failed: false,
        titled: false,
        id: Arc::clone(&core.session_id),
        // Chosen at start (`Core::planned_id`), so what is named after the session matches it.
        want_id: if options.resume.is_none() { options.session_id.clone() } else { None },
    };
    let mut history = Vec::new();
    let mut unanswered = None;
    if let Some(id) = &options.resume {
        let loaded = p.store.load(id)?;
        if loaded.meta.cwd != workspace {
            return Err(SessionError::OtherDirectory {
                id: id.clone(),
                dir: loaded.meta.cwd.display().to_string(),
            });
        }
        let (loaded, writer) = p.store.resume(id)?;
        notes.extend(loaded.warnings.iter().cloned());
        history = loaded.messages;
        unanswered = loaded.unanswered.map(|m| m.text());
        p.titled = loaded.title.is_some();
        *core.session_id.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(id.clone());
        core.lock().earlier = loaded.spent;
        p.writer = Some(writer);
    }
    Ok(Resumed { persist: Some(p), history, unanswered })
}

/// What a session starts from when it is saved or resumed.
#[derive(Default)]
pub(super) struct Resumed {
    pub persist: Option<crate::persist::Persist>,
    pub history: Vec<Message>,
    /// The last message sent in the resumed session whose turn never completed a round.
    pub unanswered: Option<String>,
}
