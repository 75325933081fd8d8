//! The session's memory: `/remember`, `/memory`, `/memory --here`, and the dream.

use super::handles::Memories;
use crate::memory::MemoryActionError as E;
use octo_agent::{Message, Role};
use octo_memory::{dream, Memory};
use std::path::PathBuf;
use std::sync::Arc;

/// How much of the conversation a dream reads (its newest part).
const DREAM_TRANSCRIPT_BYTES: usize = 24 * 1024;

/// A dream's result, shown before anything is written.
#[derive(Debug, Clone)]
pub struct DreamPlan {
    /// The index that would be replaced.
    pub path: PathBuf,
    /// Its text now (`None`: there is none yet).
    pub before: Option<String>,
    /// The new text.
    pub after: String,
    /// A unified diff from before to after.
    pub diff: String,
}

impl<'a> Memories<'a> {
    /// The session's memory (user and workspace scopes).
    pub fn store(self) -> Option<&'a Arc<Memory>> {
        self.session.setup.memory.as_ref()
    }

    /// `/remember TEXT`: adds a dated line to the workspace's Scratch Notes without a model call;
    /// the model hears of it with the next prompt. Returns the line.
    pub fn remember(self, text: &str) -> Result<String, E> {
        let memory = self.store().ok_or(E::NoMemory)?;
        let line = crate::memory::remember(memory, text)?;
        self.session.core.leave_note(format!("The user asked you to remember: {}", text.trim()));
        Ok(line)
    }

    /// `/memory --here`: keeps this workspace's memory in its own `.octo/memory` (a linked
    /// worktree's: its main tree's) from the next session on (copying what is kept under octo's home there; the copy there stays as it was).
    /// Returns the folder.
    pub(crate) fn here(self) -> Result<PathBuf, E> {
        let memory = self.store().ok_or(E::NoMemory)?;
        // In a linked worktree, the repository's main tree: its memory is shared by all.
        let workspace = crate::worktree::memory_path(&self.session.setup.workspace);
        let here = octo_memory::in_repository(&workspace);
        let from = memory.workspace.dir().to_path_buf();
        if from == here {
            return Ok(here);
        }
        std::fs::create_dir_all(&here).map_err(|source| E::Io {
            action: "create",
            path: here.display().to_string(),
            source,
        })?;
        if let Ok(rd) = std::fs::read_dir(&from) {
            for e in rd.flatten().filter(|e| e.path().extension().is_some_and(|x| x == "md")) {
                let to = here.join(e.file_name());
                if to.exists() {
                    return Err(E::Exists(to.display().to_string()));
                }
                std::fs::copy(e.path(), &to).map_err(|source| E::Io {
                    action: "copy to",
                    path: to.display().to_string(),
                    source,
                })?;
            }
        }
        if !here.join("MEMORY.md").exists() {
            std::fs::write(here.join("MEMORY.md"), octo_memory::index::empty()).map_err(|source| E::Io {
                action: "write",
                path: here.display().to_string(),
                source,
            })?;
        }
        let root = self.session.setup.config.as_ref().map(|c| crate::home::Home::new(&c.home).memory());
        if let Some(root) = root {
            octo_memory::opt_in_here(&root, &workspace).map_err(E::Record)?;
        }
        Ok(here)
    }

    /// Runs a dream: one model call (on the lite model when one is configured) that
    /// consolidates the workspace index with what this conversation established. Nothing is
    /// written; [`Memories::apply_dream`] does that once the user has seen the diff. A failed
    /// call or an answer that is no index is an error.
    pub async fn dream(self) -> Result<DreamPlan, E> {
        let memory = self.store().ok_or(E::NoMemory)?;
        let sender = self
            .session
            .setup
            .lite
            .clone()
            .or_else(|| self.session.core.current_sender())
            .ok_or(E::NoModel)?;
        let history = self.session.conversation().history().await?;
        // An index that exists but cannot be read is never replaced.
        let before = memory.workspace.read_index().map_err(E::Index)?;
        let current = before.clone().unwrap_or_else(octo_memory::index::empty);
        let request = dream::request(&current, &transcript(&history));
        let msgs = [Message::user(request)];
        let req = octo_agent::Request::new(&msgs).with_max_tokens(Some(8192));
        let answer = tokio::time::timeout(
            std::time::Duration::from_secs(180),
            super::ask::ask_once(sender.as_ref(), req),
        )
        .await
        .map_err(|_| E::DreamTimeout)?
        .ok_or(E::DreamFailed)?;
        let after = dream::accept(&answer).map_err(E::NotAnIndex)?;
        let diff = similar::TextDiff::from_lines(current.as_str(), after.as_str())
            .unified_diff()
            .header("MEMORY.md (now)", "MEMORY.md (after the dream)")
            .to_string();
        Ok(DreamPlan { path: memory.workspace.index_path(), before, after, diff })
    }

    /// Writes a dream's index, keeping the previous one in octo's trash (`octo trash restore`
    /// undoes it). Refused when the index changed since the dream read it.
    pub fn apply_dream(self, plan: &DreamPlan) -> Result<(), E> {
        let memory = self.store().ok_or(E::NoMemory)?;
        if let (Some(trash), Some(old)) = (self.session.setup.tools.trash.as_ref(), plan.before.as_deref()) {
            trash
                .record(&plan.path, Some(old.as_bytes()), plan.after.as_bytes(), "dream")
                .map_err(|e| E::Trash(e.to_string()))?;
        }
        memory.workspace.replace_index(plan.before.as_deref(), &plan.after).map_err(E::Replace)
    }
}

/// The conversation as plain text for a dream: user and assistant text, newest part.
fn transcript(history: &[Message]) -> String {
    let mut out = String::new();
    for m in history {
        let text = m.text();
        if text.trim().is_empty() {
            continue;
        }
        let who = if m.role == Role::User { "user" } else { "assistant" };
        out.push_str(&format!("{who}: {}\n\n", text.trim()));
    }
    if out.len() > DREAM_TRANSCRIPT_BYTES {
        let mut cut = out.len() - DREAM_TRANSCRIPT_BYTES;
        while !out.is_char_boundary(cut) {
            cut += 1;
        }
        out = out[cut..].to_owned();
    }
    out
}
