//! One list of what a model must not change unasked in a workspace: what git runs or reads as
//! configuration, what octo (or Claude Code) reads as its own configuration, and what is read
//! into a later session's prompt. The readers name their files through the constants here
//! (the project config folder, `.mcp.json`, `SKILLS`, the rule files in
//! [`PROJECT_RULES`]), and both guards take their list from [`entries`]: the
//! permission engine, which asks before a file tool writes one in every mode, and the sandbox,
//! which keeps them read-only for commands. A new prompt source added here is guarded by both.

/// The workspace's git folder.
pub const GIT_DIR: &str = ".git";
/// Git reads submodule URLs and update commands from it.
pub const GITMODULES: &str = ".gitmodules";
/// octo's project folder: `config.toml`, skills, commands, agents, memory, worktrees.
pub const OCTO_DIR: &str = ".octo";
/// Claude Code's project folder: settings (hooks are commands), skills, commands, agents.
pub const CLAUDE_DIR: &str = ".claude";
/// The project's MCP servers: commands octo starts.
pub const MCP_JSON: &str = ".mcp.json";
/// A project's skill files (`SKILLS/*.md`), listed in every prompt.
pub const SKILLS_DIR: &str = "SKILLS";
/// Claude Code's personal project instructions, read into its prompt beside `CLAUDE.md`.
pub const CLAUDE_LOCAL: &str = "CLAUDE.local.md";
/// The project's rule files read into every prompt, in this order (octo-app's prompt reads
/// them; the engine and the sandbox protect the same names).
pub const PROJECT_RULES: &[&str] = &[".octorules", "AGENTS.md", "CLAUDE.md"];

/// Where a protected name counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// As any component of a path (`sub/.git/config`, `vendor/.claude/settings.json`): a
    /// nested project's files are read when a session starts there.
    Anywhere,
    /// Only at the workspace's root (a `skills/` folder elsewhere is ordinary code).
    Root,
}

/// One protected name and why it is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The file or folder name, as the reader spells it.
    pub name: &'static str,
    /// Where it counts.
    pub reach: Reach,
    /// Who reads it, for notices and docs.
    pub why: &'static str,
}

/// Every protected name, git's first. The sandbox keeps each (except `.git`, which has its own
/// setting) read-only at the workspace's root; the permission engine matches [`Reach::Anywhere`]
/// names on any path component and [`Reach::Root`] ones at the root.
pub fn entries() -> Vec<Entry> {
    let fixed = [
        (GIT_DIR, Reach::Anywhere, "git runs its hooks and reads its config"),
        (GITMODULES, Reach::Anywhere, "git reads submodule commands from it"),
        (OCTO_DIR, Reach::Anywhere, "octo's project config, skills, commands, agents and memory"),
        (CLAUDE_DIR, Reach::Anywhere, "Claude Code settings, hooks, skills, commands and agents"),
        (MCP_JSON, Reach::Anywhere, "MCP servers octo starts"),
        (CLAUDE_LOCAL, Reach::Anywhere, "read into Claude Code's prompt"),
        (SKILLS_DIR, Reach::Root, "skills listed in every prompt"),
        (".vscode", Reach::Anywhere, "VS Code runs its tasks and applies its settings when the folder opens"),
        (".idea", Reach::Anywhere, "JetBrains IDEs run its run configurations and startup tasks"),
        (".devcontainer", Reach::Anywhere, "dev containers run its commands when the folder opens"),
        (".envrc", Reach::Anywhere, "direnv runs it on entering the folder"),
    ];
    let rules =
        crate::protected::PROJECT_RULES.iter().map(|n| (*n, Reach::Anywhere, "read into every prompt"));
    fixed.into_iter().chain(rules).map(|(name, reach, why)| Entry { name, reach, why }).collect()
}

/// The names matched on any path component, lowercased (file systems may ignore case).
pub fn anywhere_names() -> impl Iterator<Item = String> {
    entries().into_iter().filter(|e| e.reach == Reach::Anywhere).map(|e| e.name.to_ascii_lowercase())
}

/// The names the sandbox keeps read-only at the workspace's root (all but `.git`, which the
/// sandbox guards by its own `git_writable` setting).
pub fn sandbox_names() -> impl Iterator<Item = &'static str> {
    entries().into_iter().map(|e| e.name).filter(|n| *n != GIT_DIR)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prompt_rule_file_is_protected_everywhere() {
        let names: Vec<String> = anywhere_names().collect();
        for rule in crate::protected::PROJECT_RULES {
            assert!(names.contains(&rule.to_ascii_lowercase()), "{rule}");
        }
        assert!(sandbox_names().any(|n| n == SKILLS_DIR));
        assert!(!names.contains(&"skills".to_owned()), "a skills folder elsewhere is ordinary code");
        assert!(!sandbox_names().any(|n| n == GIT_DIR));
        for runs_on_open in [".vscode", ".idea", ".devcontainer", ".envrc"] {
            assert!(names.contains(&runs_on_open.to_owned()), "{runs_on_open}");
        }
    }
}
