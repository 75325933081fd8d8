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
use crate::marketplaces::EntrySource;
use crate::plugin_parts::ManifestError;
pub use crate::plugin_source::PluginError;
use crate::plugin_source::{clone, is_git_url, valid_name};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
fn octo_installed(home: &Home, notes: &mut Vec<String>, problems: &mut Vec<Problem>) -> Vec<InstalledPlugin> {
    let Ok(rd) = std::fs::read_dir(home.root().join("plugins")) else { return Vec::new() };
    let mut dirs: Vec<PathBuf> = rd.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    dirs.into_iter()
        .filter(|d| !d.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')))
        .filter_map(|d| match from_dir(&d, PluginFrom::Octo) {
            Ok(p) => Some(p),
            Err(why) => {
                notes.push(format!("skipped the plugin folder {}: {why}", d.display()));
                problems.push(Problem::new(
                    &d,
                    d.file_name().unwrap_or_default().to_string_lossy().into(),
                    &why,
                ));
                None
            }
        })
        .collect()
}

/// The plugin in folder `dir`: its `.claude-plugin/plugin.json` (optional when it has a plugin's
/// folders, or a marketplace entry octo kept at install), and that entry.
pub(crate) fn from_dir(dir: &Path, from: PluginFrom) -> Result<InstalledPlugin, ManifestError> {
    let entry = crate::claude_plugins::read_json(&dir.join(ENTRY_FILE)).filter(serde_json::Value::is_object);
    let manifest = match crate::plugin_parts::manifest_of(dir) {
        Ok(m) => m,
        Err(ManifestError::Missing(_)) if entry.is_some() => {
            serde_json::Value::Object(serde_json::Map::new())
        }
        Err(e) => return Err(e),
    };
    let root = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let named = |v: &serde_json::Value| v.get("name").and_then(serde_json::Value::as_str).map(str::to_owned);
    let name = match named(&manifest).or_else(|| entry.as_ref().and_then(named)) {
        Some(n) if valid_name(&n) => n,
        Some(n) => return Err(ManifestError::BadName(n)),
        None => root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| valid_name(n))
            .ok_or(ManifestError::NoName)?,
    };
    Ok(InstalledPlugin { id: name.clone(), name, from, root, manifest: Some(manifest), entry })
}

/// Where an install from a marketplace keeps the plugin's entry (its manifest fields).
const ENTRY_FILE: &str = ".claude-plugin/octo-marketplace-entry.json";

/// A plugin folder that could not be used, as Claude Code's `plugin_errors` name one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Which plugin: its folder's name, or `inline[N]` for the N-th `--plugin-dir`.
    pub plugin: String,
    /// Its folder.
    pub path: PathBuf,
    /// Why it was skipped.
    pub message: String,
}

impl Problem {
    fn new(path: &Path, plugin: String, why: &ManifestError) -> Self {
        Self { plugin, path: path.to_path_buf(), message: why.to_string() }
    }
}

/// Every plugin octo knows of, on or off: Claude Code's installs, octo's, and `dirs`
/// (`--plugin-dir`, always on). A later plugin of the same name replaces an earlier one.
pub fn all(
    home: &Home,
    places: (Option<&Path>, Option<&Path>),
    dirs: &[PathBuf],
    notes: &mut Vec<String>,
) -> Vec<Listed> {
    gather(home, places, dirs, notes, &mut Vec::new())
}

fn gather(
    home: &Home,
    (user_home, workspace): (Option<&Path>, Option<&Path>),
    dirs: &[PathBuf],
    notes: &mut Vec<String>,
    problems: &mut Vec<Problem>,
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
    for p in octo_installed(home, notes, problems) {
        let on = chosen.get(&p.id).copied().unwrap_or(true);
        add(p, on, notes);
    }
    for (i, d) in dirs.iter().enumerate() {
        match from_dir(d, PluginFrom::Dir) {
            Ok(p) => add(p, true, notes),
            Err(why) => {
                notes.push(format!("--plugin-dir {}: {why}; skipped", d.display()));
                problems.push(Problem::new(d, format!("inline[{i}]"), &why));
            }
        }
    }
    out
}

/// The plugins sessions in the workspace use (`places`: the user's home, the workspace); the
/// folders that could not be used are added to `problems` (and named in `notes`).
pub(crate) fn enabled(
    home: &Home,
    places: (Option<&Path>, Option<&Path>),
    dirs: &[PathBuf],
    (notes, problems): (&mut Vec<String>, &mut Vec<Problem>),
) -> Vec<InstalledPlugin> {
    gather(home, places, dirs, notes, problems).into_iter().filter(|l| l.enabled).map(|l| l.plugin).collect()
}

/// The plugin ids the project's `.claude/settings.json` and `settings.local.json` turn on.
fn project_enabled(workspace: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for name in ["settings.json", "settings.local.json"] {
        let Some(v) = crate::claude_plugins::read_settings(&workspace.join(".claude").join(name)) else {
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

/// Installs a plugin into octo's home from a local folder (copied), a git URL (cloned, the
/// default branch, shallow) or a marketplace (`name@marketplace`, from a marketplace octo or
/// Claude Code added; `claude_dir` is `~/.claude`). Nothing is installed unless the source is a
/// plugin.
pub fn install(home: &Home, claude_dir: Option<&Path>, source: &str) -> Result<InstalledPlugin, PluginError> {
    let plugins = home.root().join("plugins");
    std::fs::create_dir_all(&plugins)
        .map_err(|e| PluginError::Io { what: format!("creating {}", plugins.display()), source: e })?;
    let staging = plugins.join(format!(".install-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    let result = stage(home, claude_dir, source, &staging).and_then(|dir| {
        let plugin = from_dir(&dir, PluginFrom::Octo).map_err(PluginError::from)?;
        let target = plugins.join(&plugin.name);
        if target.exists() {
            return Err(PluginError::Exists(plugin.name, target));
        }
        std::fs::rename(&dir, &target).map_err(|e| PluginError::Io {
            what: format!("moving the plugin to {}", target.display()),
            source: e,
        })?;
        from_dir(&target, PluginFrom::Octo).map_err(PluginError::from)
    });
    let _ = std::fs::remove_dir_all(&staging);
    result
}

/// `name@marketplace`, when `source` is that and not a path or a URL.
fn marketplace_id(source: &str) -> Option<(&str, &str)> {
    // A folder of that name is `./name@market`: a name the user typed stays a marketplace's even
    // where the current folder (a cloned repository) has a folder so named.
    if is_git_url(source) {
        return None;
    }
    source.rsplit_once('@').filter(|(n, m)| valid_name(n) && valid_name(m))
}

/// Puts the plugin `source` in a folder under `staging` named as its installed folder will be;
/// returns that folder.
fn stage(
    home: &Home,
    claude_dir: Option<&Path>,
    source: &str,
    staging: &Path,
) -> Result<PathBuf, PluginError> {
    if let Some((name, market)) = marketplace_id(source) {
        let (from, entry) = crate::marketplaces::find(home, claude_dir, name, market)?;
        let dir = staging.join(name);
        match from {
            EntrySource::Folder(f) => copy_tree(&f, &dir, 0)
                .map_err(|e| PluginError::Io { what: format!("copying {}", f.display()), source: e })?,
            EntrySource::Git { url, branch, subdir } => {
                let checkout = staging.join(".clone");
                clone(&url, &checkout, branch.as_deref())?;
                let from = match subdir {
                    Some(rel) => crate::plugin_parts::inside(&checkout, &rel).ok_or_else(|| {
                        PluginError::BadSource { plugin: name.to_owned(), market: market.to_owned() }
                    })?,
                    None => checkout,
                };
                std::fs::rename(&from, &dir).map_err(|e| PluginError::Io {
                    what: format!("placing {}", from.display()),
                    source: e,
                })?;
            }
        }
        keep_entry(&dir, &entry)?;
        return Ok(dir);
    }
    if is_git_url(source) {
        let name = source.trim_end_matches('/').rsplit(['/', ':']).next().unwrap_or_default();
        let name = name.strip_suffix(".git").unwrap_or(name);
        let dir = staging.join(if valid_name(name) { name } else { "plugin" });
        clone(source, &dir, None)?;
        return Ok(dir);
    }
    let from = Path::new(source);
    if let Err(e) = crate::plugin_parts::manifest_of(from) {
        return Err(match crate::marketplaces::listing_name(from) {
            Some(market) => PluginError::IsAMarketplace { path: from.to_path_buf(), market },
            None => e.into(),
        });
    }
    let real = std::fs::canonicalize(from)
        .map_err(|e| PluginError::Io { what: format!("reading {}", from.display()), source: e })?;
    let name = real.file_name().map(|n| n.to_string_lossy().into_owned()).filter(|n| valid_name(n));
    let dir = staging.join(name.as_deref().unwrap_or("plugin"));
    copy_tree(from, &dir, 0)
        .map_err(|e| PluginError::Io { what: format!("copying {}", from.display()), source: e })?;
    Ok(dir)
}

/// Writes the marketplace entry into the staged plugin `dir`, never through a link the plugin
/// brought (its `.claude-plugin` must be a folder; a file already at the entry's name is
/// replaced, not written through).
fn keep_entry(dir: &Path, entry: &serde_json::Value) -> Result<(), PluginError> {
    let file = dir.join(ENTRY_FILE);
    let io = |e| PluginError::Io { what: format!("writing {}", file.display()), source: e };
    let meta = dir.join(".claude-plugin");
    if std::fs::symlink_metadata(&meta).is_ok_and(|m| !m.is_dir()) {
        return Err(io(std::io::Error::other("the plugin's .claude-plugin is not a folder (a link?)")));
    }
    std::fs::create_dir_all(&meta).map_err(io)?;
    match std::fs::remove_file(&file) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
        _ => {}
    }
    let text = serde_json::to_string_pretty(entry).unwrap_or_default();
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&file).map_err(io)?;
    std::io::Write::write_all(&mut f, text.as_bytes()).map_err(io)
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
        } else if kind.is_file() {
            std::fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}
