//! Agent definitions for sub-agents, in Claude Code's format: `<dir>/<name>.md` with frontmatter
//! (`name`, `description`, and where present `tools`, `disallowed-tools`, `model`,
//! `permission-mode`, `max-turns`) and the agent's instructions as the body.

use crate::frontmatter;
use crate::skill::read_limited;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A sub-agent type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDef {
    /// What the `task` tool's `subagent_type` names.
    pub name: String,
    /// When to use it (listed in the `task` tool's description).
    pub description: String,
    /// The tools it may use, as written (`None`: every tool the parent lends).
    pub tools: Option<Vec<String>>,
    /// Tools it may not use, as written.
    pub disallowed_tools: Vec<String>,
    /// The model, as written (`endpoint:model`, a model of the parent's endpoint, or `lite`).
    pub model: Option<String>,
    /// A permission mode, as written (it can only narrow the parent's).
    pub permission_mode: Option<String>,
    /// Its turn cap.
    pub max_turns: Option<u32>,
    /// Its instructions (the system prompt it runs with).
    pub prompt: String,
    /// Where it is (`None` for built-in types).
    pub file: Option<PathBuf>,
    /// Where it was found (`~/.claude/agents`, `built-in`).
    pub source: String,
}

/// Every agent type, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Agents {
    entries: BTreeMap<String, AgentDef>,
    /// A plugin's agent by its own name, where that is unambiguous.
    aliases: BTreeMap<String, String>,
}

impl Agents {
    /// `builtin` first, then the files in `dirs` (each `(folder, label)`), in order: a later one
    /// replaces an earlier one of the same name (with a notice). Bad files are skipped with a
    /// notice naming the file and the reason.
    pub fn discover(builtin: Vec<AgentDef>, dirs: &[(PathBuf, String)]) -> (Self, Vec<String>) {
        let entries: BTreeMap<String, AgentDef> = builtin.into_iter().map(|a| (a.name.clone(), a)).collect();
        let mut agents = Self { entries, aliases: BTreeMap::new() };
        let mut notices = Vec::new();
        for (dir, label) in dirs {
            for path in md_files(dir) {
                agents.add_file(&path, label, None, &mut notices);
            }
        }
        (agents, notices)
    }

    /// Adds the agents of the plugin `plugin` found at `path` (a folder of `*.md`, or one
    /// file): each is called `plugin:name`, and also `name` where that is unambiguous.
    pub fn add_plugin(&mut self, path: &Path, label: &str, plugin: &str) -> Vec<String> {
        let mut notices = Vec::new();
        let files = if path.is_file() { vec![path.to_path_buf()] } else { md_files(path) };
        for file in files {
            self.add_file(&file, label, Some(plugin), &mut notices);
        }
        let mut own: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for full in self.entries.keys() {
            if let Some((_, name)) = full.split_once(':') {
                own.entry(name.to_owned()).or_default().push(full.clone());
            }
        }
        self.aliases = own
            .into_iter()
            .filter(|(name, fulls)| fulls.len() == 1 && !self.entries.contains_key(name))
            .filter_map(|(name, mut fulls)| Some((name, fulls.pop()?)))
            .collect();
        notices
    }

    fn add_file(&mut self, path: &Path, label: &str, plugin: Option<&str>, notices: &mut Vec<String>) {
        match load(path, label, plugin.is_some()) {
            Ok(mut def) => {
                if let Some(p) = plugin {
                    def.name = format!("{p}:{}", def.name);
                }
                if let Some(old) = self.entries.get(&def.name) {
                    notices.push(format!(
                        "the agent `{}` in {} replaces the one from {}",
                        def.name,
                        path.display(),
                        old.file.as_ref().map_or_else(|| old.source.clone(), |f| f.display().to_string())
                    ));
                }
                self.entries.insert(def.name.clone(), def);
            }
            Err(why) => notices.push(format!("skipped the agent {}: {why}", path.display())),
        }
    }

    /// The type called `name` (a plugin's also by its own name, where that is unambiguous).
    pub fn get(&self, name: &str) -> Option<&AgentDef> {
        self.entries.get(name).or_else(|| self.entries.get(self.aliases.get(name)?))
    }

    /// Every type, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = &AgentDef> {
        self.entries.values()
    }

    /// The names, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.entries.keys().map(String::as_str).collect()
    }
}

/// The `*.md` files of `dir`, sorted (none when it cannot be read).
fn md_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut paths: Vec<PathBuf> =
        rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "md")).collect();
    paths.sort();
    paths
}

/// Reads an agent file. A plugin's may leave out `name` (its file's name) and `description`, as
/// Claude Code reads them.
fn load(path: &Path, label: &str, of_plugin: bool) -> Result<AgentDef, String> {
    let text = read_limited(path)?;
    let split = frontmatter::split(&text)?;
    let yaml =
        split.yaml.ok_or("it has no frontmatter (a `---` block with `name` and `description` at the top)")?;
    let value = frontmatter::value(yaml)?;
    let front = frontmatter::parse(yaml)?;
    let stem = || path.file_stem().map(|s| s.to_string_lossy().into_owned()).filter(|_| of_plugin);
    let name = front.name.or_else(stem).ok_or("its frontmatter has no `name`")?;
    let description = match front.description.filter(|d| !d.is_empty()) {
        Some(d) => d,
        None if of_plugin => format!("The {name} agent"),
        None => return Err("its frontmatter has no `description`".to_owned()),
    };
    if name.is_empty()
        || name.len() > 64
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(format!("its name `{name}` is not a valid agent name (letters, digits, `-`, `_`)"));
    }
    let list = |key: &str| -> Result<Option<Vec<String>>, String> {
        match value.get(key) {
            None | Some(yaml_serde::Value::Null) => Ok(None),
            Some(yaml_serde::Value::String(s)) => Ok(Some(frontmatter::split_tools(s))),
            Some(yaml_serde::Value::Sequence(items)) => items
                .iter()
                .map(|i| {
                    i.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| format!("`{key}` must be a list of tool names"))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(format!("`{key}` must be a tool list (`Read, Grep, Bash`)")),
        }
    };
    let text_field =
        |key: &str| value.get(key).and_then(yaml_serde::Value::as_str).map(|s| s.trim().to_owned());
    let max_turns = match value.get("max-turns").or_else(|| value.get("maxTurns")) {
        None | Some(yaml_serde::Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| *n > 0)
                .ok_or("`max-turns` must be a whole number of at least 1")?,
        ),
    };
    Ok(AgentDef {
        name,
        description,
        tools: list("tools")?,
        disallowed_tools: match list("disallowed-tools")? {
            Some(l) => l,
            None => list("disallowedTools")?.unwrap_or_default(),
        },
        model: front.model,
        permission_mode: text_field("permission-mode").or_else(|| text_field("permissionMode")),
        max_turns,
        prompt: split.body.trim().to_owned(),
        file: Some(path.to_path_buf()),
        source: label.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_plugins_agent_may_leave_out_its_name_and_description_and_a_users_may_not() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("anon.md"), "---\ntools: Read\n---\nYou look.\n").unwrap();
        std::fs::write(t.path().join("file.md"), "---\nname: other\ndescription: D\n---\nYou.\n").unwrap();
        let mut agents = Agents::default();
        let notices = agents.add_plugin(t.path(), "plugin", "kit");
        assert!(notices.is_empty(), "{notices:?}");
        assert!(
            agents.get("kit:anon").is_some() && agents.get("kit:other").is_some(),
            "{:?}",
            agents.names()
        );
        let err = load(&t.path().join("anon.md"), "user", false).unwrap_err();
        assert!(err.contains("no `name`"), "{err}");
    }
}
