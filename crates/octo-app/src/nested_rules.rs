//! Rules for part of a project, read when work reaches that part, as Claude Code reads them:
//! a `CLAUDE.md` or `CLAUDE.local.md` in a folder below the workspace, once a file tool reads or
//! writes a file in that folder or below it; a rule in `.claude/rules/` whose frontmatter names
//! `paths:` globs, once a file tool touches a file they match. Each is added once per session,
//! after the result of the call that reached it. The workspace's own rules files are in the
//! system prompt already (`prompt`). Files are the project's, like the root's rules files: the
//! file tools ask before writing any of these names (`octo_permissions::protected`).

use async_trait::async_trait;
use octo_agent::plugin::ToolCallInfo;
use octo_agent::{AfterTool, Plugin, Subject, ToolOutput};
use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// The rules files a folder may hold, in the order they are added.
const FOLDER_RULES: [&str; 2] = ["CLAUDE.md", "CLAUDE.local.md"];

/// A rule that applies to some files only.
struct Conditional {
    /// Its name, relative to the workspace.
    name: String,
    /// The files it applies to (relative to the workspace).
    globs: globset::GlobSet,
    /// Its text, without the frontmatter.
    body: String,
}

/// The plugin: the workspace, the conditional rules, and what was added already.
pub(crate) struct NestedRules {
    workspace: PathBuf,
    conditional: Vec<Conditional>,
    added: Mutex<HashSet<PathBuf>>,
}

impl NestedRules {
    /// The plugin for `workspace`, with its `.claude/rules/` conditional rules read now (a glob
    /// that does not parse leaves its rule out).
    pub(crate) fn new(workspace: &Path) -> Self {
        let conditional = crate::prompt::conditional_rules(workspace)
            .into_iter()
            .filter_map(|(name, patterns, body)| {
                let mut set = globset::GlobSetBuilder::new();
                for p in patterns {
                    let p = p.trim_start_matches("./");
                    set.add(globset::GlobBuilder::new(p).literal_separator(true).build().ok()?);
                }
                Some(Conditional { name, globs: set.build().ok()?, body })
            })
            .collect();
        Self { workspace: workspace.to_path_buf(), conditional, added: Mutex::default() }
    }

    /// The rules `file` (relative to the workspace, lexically clean) brings that were not added
    /// yet, each with a heading.
    fn reached(&self, rel: &Path) -> Vec<String> {
        let mut added = self.added.lock().unwrap_or_else(PoisonError::into_inner);
        let mut out = Vec::new();
        let mut dir = PathBuf::new();
        let folders: Vec<&std::ffi::OsStr> = rel.parent().map(|p| p.iter().collect()).unwrap_or_default();
        for part in folders {
            dir.push(part);
            for name in FOLDER_RULES {
                let file = dir.join(name);
                if added.contains(&file) {
                    continue;
                }
                let real = std::fs::canonicalize(self.workspace.join(&file)).ok();
                let within = real
                    .zip(std::fs::canonicalize(&self.workspace).ok())
                    .is_some_and(|(r, w)| r.starts_with(w));
                if let Some(text) =
                    within.then(|| crate::prompt::load_rules(&self.workspace.join(&file))).flatten()
                {
                    added.insert(file.clone());
                    out.push(format!(
                        "# Project rules for {}/ ({})\n{}",
                        dir.display(),
                        file.display(),
                        text.trim()
                    ));
                }
            }
        }
        for rule in &self.conditional {
            let key = PathBuf::from(&rule.name);
            if !added.contains(&key) && rule.globs.is_match(rel) {
                added.insert(key);
                out.push(format!("# Project rules for {} ({})\n{}", rel.display(), rule.name, rule.body));
            }
        }
        out
    }
}

/// `path` relative to `workspace` when it lies inside it (lexically: no `..` out of it).
fn inside(workspace: &Path, path: &str) -> Option<PathBuf> {
    let p = Path::new(path);
    let rel = if p.is_absolute() { p.strip_prefix(workspace).ok()? } else { p };
    let mut out = PathBuf::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            Component::ParentDir if out.pop() => {}
            _ => return None,
        }
    }
    Some(out)
}

#[async_trait]
impl Plugin for NestedRules {
    fn name(&self) -> &str {
        "nested-rules"
    }

    async fn after_tool(&self, call: ToolCallInfo<'_>, output: &ToolOutput) -> AfterTool {
        let Subject::Path { field, .. } = &call.meta.subject else { return AfterTool::Keep };
        let path = call.input.get(field).and_then(serde_json::Value::as_str);
        let Some(rel) = path.filter(|_| !output.is_error).and_then(|p| inside(&self.workspace, p)) else {
            return AfterTool::Keep;
        };
        let found = self.reached(&rel);
        if found.is_empty() {
            AfterTool::Keep
        } else {
            AfterTool::AddContext(format!(
                "The project's instructions for the files this call reached (follow them as the project's rules):\n\n{}",
                found.join("\n\n")
            ))
        }
    }
}

#[cfg(test)]
mod tests;
