//! What a call reaches, worked out once per check. A path is taken both as written (`..` removed)
//! and as resolved (symlinks of its longest existing prefix followed), because a repository can
//! commit a symlink (`gitdir -> .git`) that makes an innocent-looking path land somewhere
//! protected; a URL is parsed the way the HTTP client will parse it, so `http://2130706433/` is
//! known to be `127.0.0.1`.

use octo_agent::{PermissionQuery, Subject};
use octo_tools::web::host::{self, HostKind};
use std::path::{Path, PathBuf};

/// A path subject.
#[derive(Debug, Clone)]
pub(crate) struct PathTarget {
    /// As written, made absolute, `~` and `..` resolved without touching the disk.
    pub lexical: PathBuf,
    /// With symlinks resolved.
    pub real: PathBuf,
    /// Whether the resolved path is inside the (resolved) workspace.
    pub inside: bool,
    /// The resolved path relative to the resolved workspace, when inside.
    pub real_rel: Option<PathBuf>,
    /// The written path relative to the workspace, when inside.
    pub lexical_rel: Option<PathBuf>,
}

impl PathTarget {
    /// The forms a path rule is matched against: absolute and workspace-relative, as written
    /// and resolved (`resolved_only` keeps just the resolved ones, for allow rules: an allow
    /// must hold for where the call really lands).
    pub fn forms(&self, resolved_only: bool) -> Vec<String> {
        let mut out = vec![self.real.to_string_lossy().into_owned()];
        out.extend(self.real_rel.iter().map(|p| p.to_string_lossy().into_owned()));
        if !resolved_only {
            out.push(self.lexical.to_string_lossy().into_owned());
            out.extend(self.lexical_rel.iter().map(|p| p.to_string_lossy().into_owned()));
        }
        out
    }
}

/// A URL subject.
#[derive(Debug, Clone)]
pub(crate) struct UrlTarget {
    /// The host, normalized (lowercase; an IP in its usual spelling), when the URL parses.
    pub host: Option<String>,
    /// Where that host is.
    pub kind: HostKind,
    /// Characters of encoded-looking data in the path and query, when there are many.
    pub encoded: Option<usize>,
}

/// What one call reaches.
#[derive(Debug, Clone, Default)]
pub(crate) struct Target {
    pub path: Option<PathTarget>,
    pub url: Option<UrlTarget>,
}

impl Target {
    /// Works out the target of `q`; `~` means `home`.
    pub fn of(q: &PermissionQuery<'_>, home: &Path) -> Self {
        match &q.meta.subject {
            Subject::Path { .. } => Self { path: Some(path_target(q, home)), url: None },
            Subject::Url { .. } => Self { path: None, url: q.subject_value().map(url_target) },
            _ => Self::default(),
        }
    }
}

/// `raw` made absolute against `cwd`, with `~` as `home`.
pub(crate) fn absolute(cwd: &Path, raw: &str, home: &Path) -> PathBuf {
    let expanded = match raw.strip_prefix("~/") {
        Some(rest) => home.join(rest).to_string_lossy().into_owned(),
        None if raw == "~" => home.to_string_lossy().into_owned(),
        None => raw.to_owned(),
    };
    octo_tools::path::resolve(cwd, &expanded)
}

fn path_target(q: &PermissionQuery<'_>, home: &Path) -> PathTarget {
    let lexical = absolute(q.cwd, q.subject_value().unwrap_or("."), home);
    let real = octo_tools::path::real_path(&lexical);
    let ws = octo_tools::path::normalize(q.cwd);
    let real_ws = octo_tools::path::real_path(&ws);
    let real_rel = real.strip_prefix(&real_ws).ok().map(Path::to_path_buf);
    let lexical_rel = lexical.strip_prefix(&ws).ok().map(Path::to_path_buf);
    PathTarget { inside: real_rel.is_some(), lexical, real, real_rel, lexical_rel }
}

fn url_target(raw: &str) -> UrlTarget {
    match host::parse(raw) {
        Some(url) => UrlTarget {
            host: host::host_of(&url),
            kind: host::classify(&url),
            encoded: host::encoded_data(&url),
        },
        None => UrlTarget { host: None, kind: HostKind::Public, encoded: None },
    }
}
