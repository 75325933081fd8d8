//! The session's skills and custom commands: listing them, reading them again, and running one
//! as `/name args`.

use super::error::SessionError;
use super::handles::{Skills, Trust};
use super::state::Command;
use crate::hooks::TrustError;
use crate::skills::{Invocation, InvokeError, Prepared, Runner};
use octo_skills::Catalog;
use std::sync::Arc;

impl<'a> Skills<'a> {
    /// The skills and commands found when the session started (or last reloaded).
    pub fn catalog(self) -> Arc<Catalog> {
        self.session.setup.skills.catalog.get()
    }

    /// Reads the skill and command folders again and rebuilds the system prompt's listing (the
    /// next request then rebuilds the provider's prompt cache). Returns the notices (skipped
    /// files, overrides).
    pub fn reload(self) -> Result<Vec<String>, SessionError> {
        let (catalog, mut notices) = crate::skills::discover(&self.session.setup.skills.roots);
        if let Some((home, env, parts)) = &self.session.setup.skills.prompt {
            let mut parts = parts.clone();
            if parts.skills.is_some() || !self.session.setup.tools.registry.is_empty() {
                let (listing, notice) =
                    octo_skills::listing(&catalog, octo_skills::SKILL_TOOL, octo_skills::LISTING_BUDGET);
                parts.skills = listing;
                notices.extend(notice);
            }
            let (system, _) = crate::prompt::assemble_with_sources(home, env, &parts);
            self.session.commands.send(Command::SystemPrompt(system)).map_err(|_| SessionError::Closed)?;
        }
        self.session.setup.skills.catalog.replace(catalog);
        self.session.trust().refresh_project_trust();
        Ok(notices)
    }

    /// `/name args` for a skill or command the user may run: `None` when there is none by that
    /// name; an error when it cannot run (its file went bad, a command in it is refused). Its
    /// steps say what will run or be read first and which need the user's yes.
    pub async fn invoke(self, name: &str, arguments: &str) -> Option<Result<Invocation, InvokeError>> {
        let catalog = self.catalog();
        let skill = catalog.get(name).filter(|s| s.user_invocable)?;
        Some(self.runner().invoke(skill, arguments).await)
    }

    /// Runs an invocation's steps (the caller asked the user about those that needed a yes) and
    /// returns the prompt to queue with [`Session::prompt`](crate::Session::prompt).
    pub async fn finish(self, invocation: Invocation) -> Result<Prepared, InvokeError> {
        self.finish_with(invocation, octo_agent::CancellationToken::new()).await
    }

    /// [`Skills::finish`], stopping the running step when `cancel` fires (Ctrl-C).
    pub async fn finish_with(
        self,
        invocation: Invocation,
        cancel: octo_agent::CancellationToken,
    ) -> Result<Prepared, InvokeError> {
        self.runner().finish(invocation, cancel).await
    }

    /// `/name args` where nobody can be asked (`place`: `in a headless run`, `in a chat`): a
    /// step that needs a yes stops it before anything runs ([`InvokeError::NeedsYes`]); `cancel`
    /// stops the running step. `None` when there is no such skill or command.
    pub async fn invoke_unattended(
        self,
        name: &str,
        arguments: &str,
        place: &str,
        cancel: octo_agent::CancellationToken,
    ) -> Option<Result<Prepared, InvokeError>> {
        let invocation = match self.invoke(name.trim_start_matches('/'), arguments).await? {
            Ok(i) => i,
            Err(e) => return Some(Err(e)),
        };
        if let Some(step) = invocation.questions().next() {
            return Some(Err(InvokeError::NeedsYes {
                skill: name.trim_start_matches('/').to_owned(),
                action: step.action.to_string(),
                ask: step.ask.clone().unwrap_or_else(|| "it asks first".to_owned()),
                place: place.to_owned(),
            }));
        }
        Some(self.runner().finish(invocation, cancel).await)
    }

    fn runner(self) -> Runner<'a> {
        Runner {
            engine: &self.session.engine,
            tools: &self.session.setup.tools.registry,
            workspace: &self.session.setup.workspace,
            hooks: self.session.setup.hooks.cell.as_ref().map(|c| c.get()),
            models: &self.session.setup.skills.models,
        }
    }
}

impl Trust<'_> {
    /// The project's skills and commands whose `allowed-tools` wait for the user's trust
    /// (`/name: tools (file)`); empty when there are none or they are trusted. Until trusted,
    /// the calls they name are asked about as usual.
    pub fn untrusted_grants(self) -> Vec<String> {
        if self.session.engine.project_trusted() {
            return Vec::new();
        }
        crate::skills::project_grants(&self.session.skills().catalog(), &self.session.setup.workspace).0
    }

    /// Trusts the project's skills and commands as they are now (remembered by a fingerprint of
    /// the workspace and their files: a change asks again): their `allowed-tools` grant from now
    /// on, still bounded by deny rules, hard denies, protected paths, plan mode and the sandbox.
    pub fn trust_grants(self) -> Result<(), TrustError> {
        let (_, Some(fingerprint)) =
            crate::skills::project_grants(&self.session.skills().catalog(), &self.session.setup.workspace)
        else {
            return Ok(());
        };
        let config = self.session.setup.config.as_ref().ok_or(TrustError::NoHome)?;
        let home = crate::home::Home::new(&config.home);
        crate::hooks::remember_trust(&home, &fingerprint, &self.session.setup.workspace)
            .map_err(TrustError::Remember)?;
        self.session.engine.set_project_trusted(true);
        Ok(())
    }

    /// The project's Claude Code allow rules and `defaultMode` waiting for the user's trust (as
    /// written, each with its file); empty when there are none or they are trusted.
    pub fn untrusted_settings(self) -> Vec<String> {
        let applied = self.session.engine.project_settings_applied();
        let pending =
            self.session.setup.config.as_ref().and_then(|c| c.project_allow.as_ref()).filter(|_| !applied);
        pending.map(|p| p.entries.clone()).unwrap_or_default()
    }

    /// Trusts the project's settings as they are now (remembered by a fingerprint of the
    /// workspace and the entries): their allow rules apply from now on, their `defaultMode` from
    /// the next session.
    pub fn trust_settings(self) -> Result<(), TrustError> {
        let config = self.session.setup.config.as_ref().ok_or(TrustError::NoHome)?;
        let Some(pending) = config.project_allow.as_ref() else { return Ok(()) };
        crate::home::Home::new(&config.home)
            .remember_trust(&pending.fingerprint, &self.session.setup.workspace)
            .map_err(TrustError::Remember)?;
        let mut rules = crate::permissions::RuleSet::default();
        for (rule, file) in &pending.allow {
            // Rules that failed to parse were named when the settings were read.
            let _ = rules.add(std::slice::from_ref(rule), &[], &[], file);
        }
        for rule in rules.iter() {
            self.session.engine.add_rule(rule.clone());
        }
        self.session.engine.mark_project_settings_applied();
        Ok(())
    }

    /// Whether the project's granting files are the ones the user trusted.
    pub(super) fn refresh_project_trust(self) {
        let (_, fingerprint) =
            crate::skills::project_grants(&self.session.skills().catalog(), &self.session.setup.workspace);
        let trusted = match (fingerprint, self.session.setup.config.as_ref()) {
            (Some(f), Some(c)) => crate::hooks::trusted(&crate::home::Home::new(&c.home), &f),
            _ => false,
        };
        self.session.engine.set_project_trusted(trusted);
    }
}
