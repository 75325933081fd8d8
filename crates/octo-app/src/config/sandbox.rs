//! The OS sandbox's settings: the `sandbox*` keys of the config files, `OCTO_SANDBOX`,
//! `--sandbox`, and the [`octo_tools::shell::sandbox::Sandbox`] a session's commands (and hooks) run in.
//!
//! The user's config, the environment and the flag may set anything. A project's config may only
//! tighten: a stricter mode, `required`, no network, sandboxed hooks; it cannot switch the
//! sandbox off, open the network, add writable roots or make `.git` writable.

use super::types::{ConfigError, Source, Sourced};
use octo_tools::shell::sandbox::{Mode, Policy};
use std::path::{Path, PathBuf};

/// The sandbox keys of one config file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SandboxKeys {
    /// `sandbox`: `workspace-write`, `read-only`, `off` or `required`.
    pub mode: Option<String>,
    /// `sandbox_network`.
    pub network: Option<bool>,
    /// `sandbox_writable_roots` (`~/` expands to the home directory).
    pub writable_roots: Vec<String>,
    /// `sandbox_git_writable`.
    pub git_writable: Option<bool>,
    /// `sandbox_hooks`: whether hook scripts run in the sandbox too.
    pub hooks: Option<bool>,
    /// `sandbox_deny_read`: more secret places commands may not read (`~/` expands).
    pub deny_read: Vec<String>,
}

/// The effective sandbox settings.
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxSettings {
    /// What commands may change.
    pub mode: Sourced<Mode>,
    /// Refuse commands when no sandbox can be had.
    pub required: bool,
    /// Whether commands may use the network.
    pub network: bool,
    /// Extra writable directories.
    pub writable_roots: Vec<PathBuf>,
    /// Whether the workspace's `.git` is writable.
    pub git_writable: bool,
    /// Whether hook scripts run in the command sandbox (default yes: a hook such as `make fmt`
    /// runs files the model can change; `sandbox_hooks = false` in the user's config runs them
    /// unconfined, as Claude Code does).
    pub hooks: bool,
    /// Secret places beside the built-in list that commands may not read (any config may add:
    /// it only tightens).
    pub deny_read: Vec<PathBuf>,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        Self {
            mode: Sourced::new(Mode::WorkspaceWrite, Source::Default),
            required: false,
            network: false,
            writable_roots: Vec::new(),
            git_writable: false,
            hooks: true,
            deny_read: Vec::new(),
        }
    }
}

fn strictness(m: Mode) -> u8 {
    match m {
        Mode::Off => 0,
        Mode::WorkspaceWrite => 1,
        Mode::ReadOnly => 2,
    }
}

/// A mode's spelling: the mode and whether it is `required`.
pub(crate) fn parse_mode(text: &str, desc: &str) -> Result<(Mode, bool), ConfigError> {
    match text.trim() {
        "workspace-write" => Ok((Mode::WorkspaceWrite, false)),
        "read-only" => Ok((Mode::ReadOnly, false)),
        "off" | "danger-full-access" => Ok((Mode::Off, false)),
        "required" => Ok((Mode::WorkspaceWrite, true)),
        other => Err(ConfigError::Value {
            source_desc: desc.to_owned(),
            message: format!(
                "sandbox must be \"workspace-write\", \"read-only\", \"off\" or \"required\", not \"{other}\""
            ),
        }),
    }
}

impl SandboxSettings {
    /// Applies one file's keys; a project's loosening keys become warnings.
    pub(crate) fn apply_file(
        &mut self,
        keys: SandboxKeys,
        source: &Source,
        warnings: &mut Vec<String>,
    ) -> Result<(), ConfigError> {
        let desc = source.to_string();
        let project = matches!(source, Source::Project(_));
        if let Some(text) = &keys.mode {
            let (mode, required) = parse_mode(text, &desc)?;
            if project && strictness(mode) < strictness(self.mode.value) {
                warnings.push(format!(
                    "{desc}: `sandbox = \"{text}\"` is ignored: a project may tighten the sandbox, not loosen it (set it in your user config or with --sandbox)"
                ));
            } else {
                self.mode = Sourced::new(mode, source.clone());
                // A project adds `required`; only the user takes it away.
                self.required = required || (project && self.required);
            }
        }
        let mut ignored = |key: &str| {
            warnings.push(format!(
                "{desc}: `{key}` is ignored in a project config: only you may loosen the sandbox"
            ));
        };
        match keys.network {
            Some(true) if project => ignored("sandbox_network = true"),
            Some(n) => self.network = n,
            None => {}
        }
        if project && !keys.writable_roots.is_empty() {
            ignored("sandbox_writable_roots");
        } else {
            self.writable_roots.extend(keys.writable_roots.iter().map(|r| expand(r)));
        }
        match keys.git_writable {
            Some(true) if project => ignored("sandbox_git_writable = true"),
            Some(g) => self.git_writable = g,
            None => {}
        }
        self.deny_read.extend(keys.deny_read.iter().map(|r| expand(r)));
        match keys.hooks {
            Some(false) if project => ignored("sandbox_hooks = false"),
            Some(h) => self.hooks = h,
            None => {}
        }
        Ok(())
    }

    /// `OCTO_SANDBOX` or `--sandbox`: the user's own choice of mode.
    pub(crate) fn set_mode(&mut self, text: &str, source: Source) -> Result<(), ConfigError> {
        let desc = match &source {
            Source::Flag => "--sandbox".to_owned(),
            Source::Env(v) => format!("env {v}"),
            other => other.to_string(),
        };
        let (mode, required) = parse_mode(text, &desc)?;
        self.mode = Sourced::new(mode, source);
        self.required = required;
        Ok(())
    }

    /// The policy for `workspace`: the settings plus the temp dir and octo's command-output
    /// dir. `homes` (the user's home, octo's home) stay read-only when they lie in a writable
    /// root such as the temp dir (containers, tests) and do not hold the workspace.
    pub(crate) fn policy(
        &self,
        workspace: &Path,
        output: &Path,
        homes: &[PathBuf],
        simulate: Option<&str>,
    ) -> Policy {
        let mut p = Policy::new(self.mode.value, workspace);
        p.required = self.required;
        p.network = self.network;
        p.git_writable = self.git_writable;
        p.writable_roots.push(output.to_path_buf());
        p.writable_roots.extend(self.writable_roots.iter().cloned());
        let real = |x: &Path| std::fs::canonicalize(x).unwrap_or_else(|_| x.to_path_buf());
        let ws = real(workspace);
        let roots: Vec<PathBuf> = p.writable_roots.iter().map(|r| real(r)).collect();
        for home in homes.iter().map(|h| real(h)) {
            if !ws.starts_with(&home) && roots.iter().any(|r| home.starts_with(r) && home != *r) {
                p.read_only.push(home);
            }
        }
        let simulated: Vec<&str> =
            simulate.map(|s| s.split(',').map(str::trim).collect()).unwrap_or_default();
        p.simulate_no_landlock = simulated.contains(&"no-landlock");
        p.simulate_no_namespaces = simulated.contains(&"no-namespaces");
        p.simulate_no_supervisor = simulated.contains(&"no-supervisor");
        p.private_tmp = Some(output.join("tmp"));
        p.protected_entries = crate::protected::sandbox_names().map(str::to_owned).collect();
        p.secrets.extend(self.deny_read.iter().map(|d| workspace.join(d)));
        p
    }
}

/// `~/x` → the home directory's `x`.
pub(super) fn expand(root: &str) -> PathBuf {
    match (root.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(root),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> Source {
        Source::Project(PathBuf::from("/repo/.octo/config.toml"))
    }

    fn user() -> Source {
        Source::User(PathBuf::from("/home/u/.octo/config.toml"))
    }

    #[test]
    fn a_project_may_tighten_but_not_loosen() {
        let mut s = SandboxSettings::default();
        let mut w = Vec::new();
        let loosen = SandboxKeys {
            mode: Some("off".into()),
            network: Some(true),
            writable_roots: vec!["/".into()],
            git_writable: Some(true),
            hooks: Some(false),
            deny_read: Vec::new(),
        };
        s.apply_file(loosen, &project(), &mut w).unwrap();
        assert_eq!(s, SandboxSettings::default());
        assert_eq!(w.len(), 5, "{w:?}");
        let tighten =
            SandboxKeys { mode: Some("read-only".into()), network: Some(false), ..SandboxKeys::default() };
        s.apply_file(tighten, &project(), &mut w).unwrap();
        assert_eq!(s.mode.value, Mode::ReadOnly);
        let required = SandboxKeys { mode: Some("required".into()), ..SandboxKeys::default() };
        let mut r = SandboxSettings::default();
        r.apply_file(required, &project(), &mut w).unwrap();
        assert!(r.required);
    }

    #[test]
    fn the_user_may_loosen() {
        let mut s = SandboxSettings::default();
        let mut w = Vec::new();
        let keys = SandboxKeys {
            mode: Some("off".into()),
            network: Some(true),
            writable_roots: vec!["/opt/cache".into()],
            git_writable: Some(true),
            hooks: Some(false),
            deny_read: Vec::new(),
        };
        s.apply_file(keys, &user(), &mut w).unwrap();
        assert!(w.is_empty());
        assert_eq!((s.mode.value, s.network, s.git_writable, s.hooks), (Mode::Off, true, true, false));
        assert_eq!(s.writable_roots, vec![PathBuf::from("/opt/cache")]);
    }

    #[test]
    fn any_config_may_add_secret_places_and_a_relative_one_lies_in_the_workspace() {
        let mut s = SandboxSettings::default();
        let mut w = Vec::new();
        let keys =
            SandboxKeys { deny_read: vec!["secrets".into(), "/etc/vault".into()], ..SandboxKeys::default() };
        s.apply_file(keys, &project(), &mut w).unwrap();
        assert!(w.is_empty(), "{w:?}");
        let p = s.policy(Path::new("/ws"), Path::new("/o"), &[], None);
        assert_eq!(p.secrets, vec![PathBuf::from("/ws/secrets"), PathBuf::from("/etc/vault")]);
    }

    #[test]
    fn a_bad_mode_names_the_choices() {
        let err = parse_mode("sometimes", "config").unwrap_err().to_string();
        assert!(err.contains("workspace-write") && err.contains("sometimes"), "{err}");
    }

    #[test]
    fn the_policy_adds_the_output_dir_and_simulation() {
        let s = SandboxSettings::default();
        let p = s.policy(Path::new("/ws"), Path::new("/home/u/.octo/output"), &[], Some("no-landlock"));
        assert!(p.writable_roots.contains(&PathBuf::from("/home/u/.octo/output")));
        assert!(p.simulate_no_landlock);
    }

    #[test]
    fn a_home_in_the_temp_dir_stays_read_only_unless_it_holds_the_workspace() {
        let tmp = tempfile::tempdir().unwrap();
        let (home, ws) = (tmp.path().join("home"), tmp.path().join("ws"));
        std::fs::create_dir_all(home.join("proj")).unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        let s = SandboxSettings::default();
        let real = std::fs::canonicalize(&home).unwrap();
        let p = s.policy(&ws, Path::new("/nowhere"), std::slice::from_ref(&home), None);
        assert_eq!(p.read_only, vec![real]);
        let p = s.policy(&home.join("proj"), Path::new("/nowhere"), &[home], None);
        assert!(p.read_only.is_empty());
    }
}
