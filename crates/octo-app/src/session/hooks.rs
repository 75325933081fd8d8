//! The session's hooks: trusting a project's, listing them, and SessionEnd.

use super::handles::Trust;
use super::steps::hook_instance;
use crate::hooks::TrustError;

/// One configured hook, for `/hooks`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookInfo {
    /// The event.
    pub event: String,
    /// The matcher as written (empty: everything).
    pub matcher: String,
    /// The command.
    pub command: String,
    /// The file it comes from.
    pub source: String,
    /// Whether it runs (a project's hook waits for trust).
    pub active: bool,
}

impl Trust<'_> {
    /// The project's hooks waiting for the user's trust (`event matcher: command (file)`); empty
    /// when there are none or they are trusted.
    pub fn untrusted_hooks(self) -> Vec<String> {
        let pending =
            self.session.setup.hooks.untrusted.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some((_, set)) = pending.as_ref() else { return Vec::new() };
        set.iter()
            .filter(|(_, m)| m.project)
            .flat_map(|(e, m)| {
                m.hooks.iter().map(move |h| {
                    let matcher = if m.text.is_empty() { String::new() } else { format!(" {}", m.text) };
                    let mut how = Vec::new();
                    if let Some(c) = &h.condition {
                        how.push(format!("if {c}"));
                    }
                    if h.network {
                        how.push("with network".to_owned());
                    }
                    if h.background {
                        how.push("async".to_owned());
                    }
                    let how = if how.is_empty() { String::new() } else { format!(" [{}]", how.join(", ")) };
                    format!("{}{matcher}: {}{how} ({})", e.as_str(), h.command, m.source)
                })
            })
            .collect()
    }

    /// Trusts the project's hooks as they are now (remembered by fingerprint: a change asks
    /// again) and makes them run from the next seat on.
    pub fn trust_hooks(self) -> Result<(), TrustError> {
        let mut pending =
            self.session.setup.hooks.untrusted.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (Some(cell), Some(config)) =
            (self.session.setup.hooks.cell.as_ref(), self.session.setup.config.as_ref())
        else {
            return Err(TrustError::NoHooks);
        };
        let Some((fingerprint, _)) = pending.as_ref() else { return Ok(()) };
        let home = crate::home::Home::new(&config.home);
        // Remembered first: if that fails, the hooks stay pending and the user can try again.
        crate::hooks::remember_trust(&home, fingerprint, &self.session.setup.workspace)
            .map_err(TrustError::Remember)?;
        let Some((_, set)) = pending.take() else { return Ok(()) };
        let sandbox = self.session.setup.sandbox.clone().filter(|_| config.sandbox.hooks);
        let part = &self.session.setup.hooks;
        let runner =
            crate::hooks::runner(&self.session.setup.workspace, sandbox, &config.shell_env, &part.env_file.0)
                .with_readable(self.session.setup.hooks.readable.clone());
        let guard = self.session.setup.hooks.guard.clone();
        cell.set(hook_instance(set, runner, &home, &self.session.core, config.hooks_native, guard));
        Ok(())
    }

    /// Every configured hook and whether it runs.
    pub(crate) fn hooks(self) -> Vec<HookInfo> {
        let mut out = Vec::new();
        let waiting = self
            .session
            .setup
            .hooks
            .untrusted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let set = match (&waiting, &self.session.setup.hooks.cell) {
            (Some((_, all)), _) => all.clone(),
            (None, Some(cell)) => cell.get().set().clone(),
            (None, None) => return out,
        };
        for (e, m) in set.iter() {
            for h in &m.hooks {
                out.push(HookInfo {
                    event: e.as_str().to_owned(),
                    matcher: m.text.clone(),
                    command: h.command.clone(),
                    source: m.source.clone(),
                    active: !(m.project && waiting.is_some()),
                });
            }
        }
        out
    }
}
