//! Which Claude Code plugins a session uses: the ones Claude Code installed and the user's
//! settings enable (`~/.claude/plugins`, `enabledPlugins`), the ones `octo plugin install` put in
//! octo's home (`~/.octo/plugins/<name>`), and the folders given with `--plugin-dir` for one run.
//! `octo plugin enable|disable` keeps its choices in `~/.octo/plugins.json`, over Claude Code's
//! settings, which octo never writes. A project's `.claude/settings.json` may turn on a plugin
//! the user has installed (`enabledPlugins`, as Claude Code's project-scope installs write it);
//! such a plugin is the project's ([`PluginFrom::Project`]) and trusted like the project's own
//! files.

use crate::claude_plugins::{all_installed, InstalledPlugin, PluginFrom};
use crate::home::Home;
use crate::plugin_parts::ManifestError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why a plugin command failed; nothing was changed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PluginError {
    /// The source is not a plugin (no or a broken `.claude-plugin/plugin.json`).
    #[error(transparent)]
    NotAPlugin(#[from] ManifestError),
    /// No plugin of that name or id is installed.
    #[error("no plugin `{0}` is installed (`octo plugin list` shows them)")]
    Unknown(String),
    /// A plugin of that name is installed by octo already.
    #[error("a plugin `{0}` is installed already ({1}); remove that folder first to replace it")]
    Exists(String, PathBuf),
    /// `git clone` failed.
    #[error("could not clone {url}: {reason}")]
    Clone {
        /// The URL.
        url: String,
        /// What git said.
        reason: String,
    },
    /// A file could not be written or copied.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// Why it failed.
        source: std::io::Error,
    },
}

/// A plugin and whether it is on.
#[derive(Debug, Clone)]
pub struct Listed {
    /// The plugin.
    pub plugin: InstalledPlugin,
    /// Whether sessions use it.
    pub enabled: bool,
}

fn choices_file(home: &Home) -> PathBuf {
    home.root().join("plugins.json")
}

/// The user's `octo plugin enable|disable` choices, by plugin id.
fn choices(home: &Home) -> BTreeMap<String, bool> {
    std::fs::read_to_string(choices_file(home))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v.get("enabled").cloned())
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default()
}

/// The plugins `octo plugin install` put in octo's home.
fn octo_installed(home: &Home, notes: &mut Vec<String>) -> Vec<InstalledPlugin> {
    let Ok(rd) = std::fs::read_dir(home.root().join("plugins")) else { return Vec::new() };
    let mut dirs: Vec<PathBuf> = rd.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    dirs.into_iter()
        .filter(|d| !d.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')))
        .filter_map(|d| match from_dir(&d, PluginFrom::Octo) {
            Ok(p) => Some(p),
            Err(why) => {
                notes.push(format!("skipped the plugin folder {}: {why}", d.display()));
                None
            }
        })
        .collect()
}

/// The plugin in folder `dir` (it must have a `.claude-plugin/plugin.json`).
pub(crate) fn from_dir(dir: &Path, from: PluginFrom) -> Result<InstalledPlugin, ManifestError> {
    let manifest = crate::plugin_parts::manifest_of(dir)?;
    let root = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let name = match manifest.get("name").and_then(serde_json::Value::as_str) {
        Some(n) if valid_name(n) => n.to_owned(),
        Some(n) => return Err(ManifestError::BadName(n.to_owned())),
        None => root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| valid_name(n))
            .ok_or(ManifestError::NoName)?,
    };
    Ok(InstalledPlugin { id: name.clone(), name, from, root, manifest: Some(manifest), entry: None })
}

fn valid_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 64
        && n.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Every plugin octo knows of, on or off: Claude Code's installs, octo's, and `dirs`
/// (`--plugin-dir`, always on). A later plugin of the same name replaces an earlier one.
pub fn all(
    home: &Home,
    (user_home, workspace): (Option<&Path>, Option<&Path>),
    dirs: &[PathBuf],
    notes: &mut Vec<String>,
) -> Vec<Listed> {
    let by_project = workspace.map(project_enabled).unwrap_or_default();
    let chosen = choices(home);
    let mut out: Vec<Listed> = Vec::new();
    let mut add = |plugin: InstalledPlugin, enabled: bool, notes: &mut Vec<String>| {
        if let Some(old) = out.iter().position(|l| l.plugin.name == plugin.name) {
            if enabled && out[old].enabled {
                notes.push(format!(
                    "the plugin `{}` in {} replaces the one in {}",
                    plugin.name,
                    plugin.root.display(),
                    out[old].plugin.root.display()
                ));
            }
            if !enabled && out[old].enabled {
                return;
            }
            out.remove(old);
        }
        out.push(Listed { plugin, enabled });
    };
    if let Some(h) = user_home {
        for (mut p, on) in all_installed(&h.join(".claude")) {
            let project = !on && by_project.contains(&p.id);
            if project {
                p.from = PluginFrom::Project;
            }
            let on = chosen.get(&p.id).copied().unwrap_or(on || project);
            add(p, on, notes);
        }
    }
    for p in octo_installed(home, notes) {
        let on = chosen.get(&p.id).copied().unwrap_or(true);
        add(p, on, notes);
    }
    for d in dirs {
        match from_dir(d, PluginFrom::Dir) {
            Ok(p) => add(p, true, notes),
            Err(why) => notes.push(format!("--plugin-dir {}: {why}; skipped", d.display())),
        }
    }
    out
}

/// The plugins sessions in the workspace use (`places`: the user's home, the workspace).
pub(crate) fn enabled(
    home: &Home,
    places: (Option<&Path>, Option<&Path>),
    dirs: &[PathBuf],
    notes: &mut Vec<String>,
) -> Vec<InstalledPlugin> {
    all(home, places, dirs, notes).into_iter().filter(|l| l.enabled).map(|l| l.plugin).collect()
}

/// The plugin ids the project's `.claude/settings.json` and `settings.local.json` turn on.
fn project_enabled(workspace: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for name in ["settings.json", "settings.local.json"] {
        let Some(v) = crate::claude_plugins::read_json(&workspace.join(".claude").join(name)) else {
            continue;
        };
        if let Some(map) = v.get("enabledPlugins").and_then(serde_json::Value::as_object) {
            out.extend(map.iter().filter(|(_, on)| on.as_bool() == Some(true)).map(|(k, _)| k.clone()));
        }
    }
    out
}

/// Turns the installed plugin `which` (its name or id) on or off for octo; returns its id.
pub fn set_enabled(
    home: &Home,
    user_home: Option<&Path>,
    which: &str,
    on: bool,
) -> Result<String, PluginError> {
    let mut ignored = Vec::new();
    let id = all(home, (user_home, None), &[], &mut ignored)
        .into_iter()
        .find(|l| l.plugin.id == which || l.plugin.name == which)
        .map(|l| l.plugin.id)
        .ok_or_else(|| PluginError::Unknown(which.to_owned()))?;
    let mut all = choices(home);
    all.insert(id.clone(), on);
    let text = serde_json::to_string_pretty(&serde_json::json!({ "enabled": all })).unwrap_or_default();
    home.write_file("plugins.json", &text).map_err(|e| PluginError::Io {
        what: format!("writing {}", choices_file(home).display()),
        source: e,
    })?;
    Ok(id)
}

/// Installs a plugin into octo's home from a local folder (copied) or a git URL (cloned, the
/// default branch, shallow). The source must be a plugin folder; nothing is installed otherwise.
pub fn install(home: &Home, source: &str) -> Result<InstalledPlugin, PluginError> {
    let plugins = home.root().join("plugins");
    std::fs::create_dir_all(&plugins)
        .map_err(|e| PluginError::Io { what: format!("creating {}", plugins.display()), source: e })?;
    let staging = plugins.join(format!(".install-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    let result = stage(source, &staging).and_then(|()| {
        let plugin = from_dir(&staging, PluginFrom::Octo).map_err(PluginError::from)?;
        let target = plugins.join(&plugin.name);
        if target.exists() {
            return Err(PluginError::Exists(plugin.name, target));
        }
        std::fs::rename(&staging, &target).map_err(|e| PluginError::Io {
            what: format!("moving the plugin to {}", target.display()),
            source: e,
        })?;
        from_dir(&target, PluginFrom::Octo).map_err(PluginError::from)
    });
    let _ = std::fs::remove_dir_all(&staging);
    result
}

/// Whether `source` names a git repository rather than a folder.
fn is_git_url(source: &str) -> bool {
    ["https://", "http://", "ssh://", "git://", "git@", "file://"].iter().any(|p| source.starts_with(p))
}

/// Puts the plugin `source` in the folder `to`.
fn stage(source: &str, to: &Path) -> Result<(), PluginError> {
    if is_git_url(source) {
        let out = std::process::Command::new("git")
            .args(["clone", "--quiet", "--depth", "1", "--", source])
            .arg(to)
            .env("GIT_TERMINAL_PROMPT", "0")
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| PluginError::Clone {
                url: source.to_owned(),
                reason: format!("git cannot be run: {e}"),
            })?;
        if !out.status.success() {
            let reason = String::from_utf8_lossy(&out.stderr).trim().to_owned();
            return Err(PluginError::Clone { url: source.to_owned(), reason });
        }
        return Ok(());
    }
    let from = Path::new(source);
    crate::plugin_parts::manifest_of(from).map_err(PluginError::from)?;
    copy_tree(from, to, 0)
        .map_err(|e| PluginError::Io { what: format!("copying {}", from.display()), source: e })
}

/// Copies the folder `from` to `to` (symlinks kept as links, `.git` left out).
fn copy_tree(from: &Path, to: &Path, depth: usize) -> std::io::Result<()> {
    if depth > 32 {
        return Err(std::io::Error::other("the folder is nested more than 32 levels deep"));
    }
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            #[cfg(unix)]
            std::os::unix::fs::symlink(std::fs::read_link(&src)?, &dst)?;
        } else if kind.is_dir() {
            if entry.file_name() != ".git" {
                copy_tree(&src, &dst, depth + 1)?;
            }
        } else {
            std::fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}
