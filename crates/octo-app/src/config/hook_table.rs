//! A `[[hooks.<Event>]]` table's commands: its own `command` and Claude Code's `hooks` list,
//! each with its timeout and whether it may use the network in the sandbox.

use super::file::HookToml;
use octo_hooks::Hook;

impl HookToml {
    /// The table's commands (entries of another `type`, or empty, are left out).
    pub(super) fn commands(&self) -> Vec<Hook> {
        let secs = |t: Option<f64>| {
            t.filter(|t| t.is_finite() && *t > 0.0).map_or(octo_hooks::config::DEFAULT_TIMEOUT, |t| {
                std::time::Duration::from_secs_f64(t.min(3600.0))
            })
        };
        let mut cmds: Vec<Hook> = self
            .hooks
            .iter()
            .filter(|h| h.kind.as_deref().is_none_or(|k| k == "command") && !h.command.trim().is_empty())
            .map(|h| Hook {
                command: h.command.clone(),
                timeout: secs(h.timeout),
                network: h.network.unwrap_or(false),
                condition: h.condition.clone().or_else(|| self.condition.clone()),
                background: h.background.or(self.background).unwrap_or(false),
            })
            .collect();
        if let Some(c) = self.command.as_deref().filter(|c| !c.trim().is_empty()) {
            cmds.push(Hook {
                command: c.to_owned(),
                timeout: secs(self.timeout),
                network: self.network.unwrap_or(false),
                condition: self.condition.clone(),
                background: self.background.unwrap_or(false),
            });
        }
        cmds
    }
}
