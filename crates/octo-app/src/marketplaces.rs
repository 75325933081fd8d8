//! Claude Code's plugin marketplaces, for `octo plugin marketplace add|list|remove` and
//! `octo plugin install name@marketplace`. A marketplace is a folder (a local one, or a git
//! repository octo clones into `~/.octo/marketplaces/<name>`) with a
//! `.claude-plugin/marketplace.json` that lists plugins and where each one is: a path inside the
//! marketplace, or a git repository (`github`, `url`, `git-subdir` sources). octo keeps the ones
//! it added in `~/.octo/marketplaces.json`; the ones Claude Code added
//! (`~/.claude/plugins/known_marketplaces.json`) are read too and never written. A marketplace
//! entry may carry the plugin's manifest fields (`commands`, `hooks`, `mcpServers` …; over the
//! plugin's own when `strict` is false); an install keeps the entry beside the copy so they apply.

use crate::claude_plugins::read_json;
use crate::home::Home;
use crate::plugin_source::PluginError;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The file that lists the plugins of a marketplace folder.
pub const LISTING: &str = ".claude-plugin/marketplace.json";

/// A marketplace octo knows of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marketplace {
    /// Its name (`name` in its `marketplace.json`).
    pub name: String,
    /// What it was added from: a folder or a git URL.
    pub source: String,
    /// The folder that holds its `.claude-plugin/marketplace.json`.
    pub location: PathBuf,
    /// Whether Claude Code added it (octo only reads those).
    pub by_claude: bool,
}

fn registry_file(home: &Home) -> PathBuf {
    home.root().join("marketplaces.json")
}

/// The marketplaces octo added, then the ones Claude Code added (`claude_dir`: `~/.claude`)
/// under names octo has not used.
pub fn list(home: &Home, claude_dir: Option<&Path>) -> Vec<Marketplace> {
    let mut out = Vec::new();
    let read = |file: &Path, by_claude: bool, out: &mut Vec<Marketplace>| {
        let Some(Value::Object(map)) = read_json(file) else { return };
        for (name, v) in map {
            let location = v.get("installLocation").and_then(Value::as_str).map(PathBuf::from);
            let source = match v.get("source") {
                Some(Value::String(s)) => s.clone(),
                Some(other) => source_text(other),
                None => String::new(),
            };
            if let Some(location) = location {
                if !out.iter().any(|m: &Marketplace| m.name == name) {
                    out.push(Marketplace { name, source, location, by_claude });
                }
            }
        }
    };
    read(&registry_file(home), false, &mut out);
    if let Some(c) = claude_dir {
        read(&c.join("plugins/known_marketplaces.json"), true, &mut out);
    }
    out
}

/// How Claude Code's `source` object reads to a person (`owner/repo`, a URL, a path).
fn source_text(v: &Value) -> String {
    ["repo", "url", "path"]
        .iter()
        .find_map(|k| v.get(*k).and_then(Value::as_str))
        .unwrap_or_default()
        .to_owned()
}

/// Adds the marketplace at `source`: a folder with `.claude-plugin/marketplace.json`, the path
/// of such a file, a git URL, or GitHub's `owner/repo`. A folder is used where it is; a
/// repository is cloned (shallow) into `~/.octo/marketplaces/<name>`.
pub fn add(home: &Home, source: &str) -> Result<Marketplace, PluginError> {
    let (location, listing) = if let Some(url) = git_source(source) {
        let dir = home.root().join("marketplaces");
        std::fs::create_dir_all(&dir)
            .map_err(|e| PluginError::Io { what: format!("creating {}", dir.display()), source: e })?;
        let staging = dir.join(format!(".add-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&staging);
        let placed = crate::plugin_source::clone(&url, &staging, None).and_then(|()| {
            let listing = listing_of(&staging)?;
            let target = dir.join(&listing.0);
            if target.exists() {
                return Err(PluginError::MarketExists(listing.0, target));
            }
            std::fs::rename(&staging, &target).map_err(|e| PluginError::Io {
                what: format!("moving the marketplace to {}", target.display()),
                source: e,
            })?;
            Ok((target, listing))
        });
        let _ = std::fs::remove_dir_all(&staging);
        placed?
    } else {
        let path = Path::new(source);
        let folder = if path.is_file() {
            // `…/.claude-plugin/marketplace.json` → the folder above `.claude-plugin`.
            path.parent().and_then(Path::parent).map(Path::to_path_buf).unwrap_or_default()
        } else {
            path.to_path_buf()
        };
        let folder = std::fs::canonicalize(&folder).map_err(|e| PluginError::Io {
            what: format!("reading the marketplace {}", folder.display()),
            source: e,
        })?;
        let listing = listing_of(&folder)?;
        (folder, listing)
    };
    let name = listing.0;
    if list(home, None).iter().any(|m| m.name == name) {
        return Err(PluginError::MarketExists(name, location));
    }
    let mut all = match read_json(&registry_file(home)) {
        Some(Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    all.insert(
        name.clone(),
        serde_json::json!({ "source": source, "installLocation": location.display().to_string() }),
    );
    save(home, &Value::Object(all))?;
    Ok(Marketplace { name, source: source.to_owned(), location, by_claude: false })
}

/// Forgets the marketplace `name` octo added (a clone octo made is deleted; a folder is left).
/// The plugins installed from it stay installed.
pub fn remove(home: &Home, name: &str) -> Result<Marketplace, PluginError> {
    let gone = list(home, None)
        .into_iter()
        .find(|m| m.name == name)
        .ok_or_else(|| PluginError::NoMarketplace(name.to_owned()))?;
    let mut all = match read_json(&registry_file(home)) {
        Some(Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    all.remove(name);
    save(home, &Value::Object(all))?;
    let ours = home.root().join("marketplaces");
    if gone.location.starts_with(&ours) && gone.location != ours {
        let _ = std::fs::remove_dir_all(&gone.location);
    }
    Ok(gone)
}

fn save(home: &Home, v: &Value) -> Result<(), PluginError> {
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    home.write_file("marketplaces.json", &text).map_err(|e| PluginError::Io {
        what: format!("writing {}", registry_file(home).display()),
        source: e,
    })
}

/// The git URL `source` names: a URL, or GitHub's `owner/repo` (a folder so named is
/// `./owner/repo`, so a cloned repository cannot stand in for the one the user named).
fn git_source(source: &str) -> Option<String> {
    if crate::plugin_source::is_git_url(source) {
        return Some(source.to_owned());
    }
    let shorthand = source.split('/').count() == 2
        && source
            .split('/')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)))
        && !source.starts_with('.');
    shorthand.then(|| format!("https://github.com/{source}.git"))
}

/// The name and the listing of the marketplace in `folder`.
fn listing_of(folder: &Path) -> Result<(String, Value), PluginError> {
    let file = folder.join(LISTING);
    let listing = read_json(&file)
        .filter(Value::is_object)
        .ok_or_else(|| PluginError::NotAMarketplace(file.clone()))?;
    let name = listing
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| crate::plugin_source::valid_name(n))
        .ok_or_else(|| PluginError::NotAMarketplace(file.clone()))?
        .to_owned();
    Ok((name, listing))
}

/// Where the plugin of a marketplace entry is to be taken from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EntrySource {
    /// A folder inside the marketplace.
    Folder(PathBuf),
    /// A git repository (cloned shallow), at a branch or tag, and a folder inside it.
    Git { url: String, branch: Option<String>, subdir: Option<String> },
}

/// The plugin `name` of the marketplace `market` (as `octo plugin install name@market` names
/// them): where to take it from, and its entry.
pub(crate) fn find(
    home: &Home,
    claude_dir: Option<&Path>,
    name: &str,
    market: &str,
) -> Result<(EntrySource, Value), PluginError> {
    let m = list(home, claude_dir)
        .into_iter()
        .find(|m| m.name == market)
        .ok_or_else(|| PluginError::NoMarketplace(market.to_owned()))?;
    let (_, listing) = listing_of(&m.location)?;
    let entry = listing
        .get("plugins")
        .and_then(Value::as_array)
        .and_then(|l| l.iter().find(|p| p.get("name").and_then(Value::as_str) == Some(name)))
        .cloned()
        .ok_or_else(|| PluginError::NotListed { plugin: name.to_owned(), market: market.to_owned() })?;
    let root = listing.pointer("/metadata/pluginRoot").and_then(Value::as_str);
    let source = entry_source(&m.location, root, entry.get("source"))
        .ok_or_else(|| PluginError::BadSource { plugin: name.to_owned(), market: market.to_owned() })?;
    Ok((source, entry))
}

/// Reads an entry's `source`: a path (relative to the marketplace, or to its `pluginRoot` for a
/// bare name) that must stay inside the marketplace, or a `github`, `url` or `git-subdir` object.
fn entry_source(location: &Path, plugin_root: Option<&str>, source: Option<&Value>) -> Option<EntrySource> {
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    match source? {
        Value::String(rel) => {
            let bare = !rel.starts_with("./") && !rel.starts_with("../") && !rel.starts_with('/');
            let base = match plugin_root {
                Some(r) if bare => location.join(r),
                _ => location.to_path_buf(),
            };
            let real = std::fs::canonicalize(base.join(rel)).ok()?;
            let top = std::fs::canonicalize(location).ok()?;
            (real.starts_with(&top) && real.is_dir()).then_some(EntrySource::Folder(real))
        }
        v @ Value::Object(_) => {
            let branch = text(v, "ref");
            match v.get("source").and_then(Value::as_str)? {
                "github" => {
                    let repo = text(v, "repo")?;
                    Some(EntrySource::Git {
                        url: format!("https://github.com/{repo}.git"),
                        branch,
                        subdir: text(v, "path"),
                    })
                }
                "url" | "git" => {
                    Some(EntrySource::Git { url: text(v, "url")?, branch, subdir: text(v, "path") })
                }
                "git-subdir" => {
                    Some(EntrySource::Git { url: text(v, "url")?, branch, subdir: Some(text(v, "path")?) })
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// The names of the plugins the marketplace in `folder` lists.
pub fn plugin_names(folder: &Path) -> Vec<String> {
    let Ok((_, listing)) = listing_of(folder) else { return Vec::new() };
    let list = listing.get("plugins").and_then(Value::as_array).cloned().unwrap_or_default();
    list.iter().filter_map(|p| p.get("name").and_then(Value::as_str).map(str::to_owned)).collect()
}

/// The name of the marketplace in `folder`, when it is one.
pub(crate) fn listing_name(folder: &Path) -> Option<String> {
    listing_of(folder).ok().map(|(n, _)| n)
}
