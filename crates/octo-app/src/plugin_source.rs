//! What plugin and marketplace sources share: the error of a plugin command, names a plugin or
//! marketplace may have, and fetching a git repository.

use crate::plugin_parts::ManifestError;
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
    /// A marketplace of that name is known already.
    #[error("a marketplace `{0}` is known already ({1}); remove it first with `octo plugin marketplace remove {0}`")]
    MarketExists(String, PathBuf),
    /// `name@marketplace` names a marketplace octo does not know.
    #[error("no marketplace `{0}` is known (add it with `octo plugin marketplace add PATH|URL|owner/repo`; `octo plugin marketplace list` shows them)")]
    NoMarketplace(String),
    /// The marketplace does not list the plugin.
    #[error("the marketplace `{market}` lists no plugin `{plugin}` (its .claude-plugin/marketplace.json names the plugins)")]
    NotListed {
        /// The plugin asked for.
        plugin: String,
        /// The marketplace.
        market: String,
    },
    /// The marketplace's entry for the plugin has a source octo cannot take.
    #[error("the marketplace `{market}` gives `{plugin}` a source octo cannot install from (a folder inside the marketplace, or a `github`, `url` or `git-subdir` repository)")]
    BadSource {
        /// The plugin asked for.
        plugin: String,
        /// The marketplace.
        market: String,
    },
    /// A folder or file that is not a marketplace.
    #[error("{} is not a marketplace: it needs a JSON object with a `name` (letters, digits, `-`, `_`, `.`) and a `plugins` list", .0.display())]
    NotAMarketplace(PathBuf),
    /// `octo plugin install` was given a marketplace folder.
    #[error("{} is the marketplace `{market}`, not a plugin: add it with `octo plugin marketplace add {}`, then install one of its plugins with `octo plugin install NAME@{market}`", path.display(), path.display())]
    IsAMarketplace {
        /// The folder.
        path: PathBuf,
        /// Its name.
        market: String,
    },
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

/// Whether `n` can name a plugin or a marketplace (and a folder: no leading dot, no separator).
pub(crate) fn valid_name(n: &str) -> bool {
    !n.is_empty()
        && !n.starts_with('.')
        && n.len() <= 64
        && n.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Whether `source` names a git repository rather than a folder.
pub(crate) fn is_git_url(source: &str) -> bool {
    ["https://", "http://", "ssh://", "git://", "git@", "file://"].iter().any(|p| source.starts_with(p))
}

/// Clones `url` (shallow; at `branch` when given) into `to`.
pub(crate) fn clone(url: &str, to: &Path, branch: Option<&str>) -> Result<(), PluginError> {
    let mut cmd = std::process::Command::new("git");
    cmd.args(["clone", "--quiet", "--depth", "1"]);
    if let Some(b) = branch {
        cmd.args(["--branch", b]);
    }
    let out = cmd
        .args(["--", url])
        .arg(to)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| PluginError::Clone { url: url.to_owned(), reason: format!("git cannot be run: {e}") })?;
    if !out.status.success() {
        let reason = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        return Err(PluginError::Clone { url: url.to_owned(), reason });
    }
    Ok(())
}
