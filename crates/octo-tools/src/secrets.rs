//! Where secrets live on a typical machine. The permission engine refuses tools that read these
//! (unless an explicit allow rule names the path) and asks before any command that touches them,
//! in every mode; the list is short, fixed and documented — a seatbelt, not a wall.
//!
//! | where | why |
//! |---|---|
//! | `~/.ssh`, `~/.gnupg` | private keys |
//! | `~/.aws`, `~/.config/gcloud`, `~/.azure`, `~/.kube`, `~/.docker/config.json` | cloud and cluster credentials |
//! | `~/.netrc`, `~/.git-credentials`, `~/.config/git/credentials`, `~/.npmrc`, `~/.pypirc`, `~/.cargo/credentials(.toml)`, `~/.config/gh/hosts.yml`, `~/.config/hub`, `~/.vault-token`, `~/.pgpass`, `~/.password-store`, `~/.local/share/keyrings`, `~/.config/op`, rclone, doctl, Maven's `settings.xml`, Terraform's and RubyGems' credentials, `~/.s3cfg`, `~/.boto`, `~/.oci` | tokens and passwords |
//! | Claude Code's `~/.claude/.credentials.json`, Codex's `~/.codex/auth.json`, opencode's `auth.json` | other agents' logins |
//! | shell and REPL histories (`~/.bash_history`, `~/.zsh_history`, fish, Python, Node, psql, MySQL, SQLite) | tokens typed on a command line |
//! | browser profiles (Firefox, Chrome, Chromium, Brave, Edge, Vivaldi, Opera; Safari and the keychains on macOS) | cookies, saved passwords |
//! | octo's key file and configuration, and saved sessions (given by the application) | keys, other projects' conversations |
//! | `.env`, `.env.*`, `.envrc` anywhere (not `.env.example`, `.sample`, `.template`, `.dist`) | a project's secrets |
//! | `/proc/*/environ`, `/proc/*/mem` (any task) | another process's secrets — refused even with an allow rule |

use std::path::{Path, PathBuf};

/// Paths under the home directory that hold secrets.
const HOME_SECRETS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".config/gcloud",
    ".azure",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".config/gh/hosts.yml",
    ".vault-token",
    ".pgpass",
    ".password-store",
    ".local/share/keyrings",
    ".config/git/credentials",
    ".config/hub",
    ".config/op",
    ".config/rclone/rclone.conf",
    ".config/doctl",
    ".m2/settings.xml",
    ".terraform.d/credentials.tfrc.json",
    ".gem/credentials",
    ".s3cfg",
    ".boto",
    ".oci",
    // Other agents' logins, and their other projects' conversations.
    ".claude/.credentials.json",
    ".claude.json",
    ".claude/projects",
    ".codex/auth.json",
    ".local/share/opencode/auth.json",
    // Shell and REPL histories (tokens typed on a command line).
    ".bash_history",
    ".zsh_history",
    ".local/share/fish/fish_history",
    ".python_history",
    ".node_repl_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".local/share/atuin",
    // More tokens of developer tools.
    ".config/github-copilot",
    ".gemini/oauth_creds.json",
    ".huggingface/token",
    ".cache/huggingface/token",
    ".config/sops",
    ".config/containers/auth.json",
    ".pulumi/credentials.json",
    ".cloudflared",
    ".config/stripe",
    ".fly",
    ".supabase",
    ".config/ngrok",
    ".ngrok2",
    ".config/configstore",
    ".local/share/com.vercel.cli",
    ".vercel",
    ".wrangler",
    ".config/.wrangler",
    ".config/hcloud",
    ".config/openai",
    ".terraformrc",
    ".my.cnf",
    ".yarnrc.yml",
    ".env",
    ".config/Code/User/globalStorage",
    ".config/zed",
    // Browser profiles.
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    ".config/vivaldi",
    ".config/opera",
    "snap/firefox",
    "snap/chromium",
    "Library/Application Support/Google/Chrome",
    "Library/Application Support/Firefox",
    "Library/Application Support/BraveSoftware",
    "Library/Application Support/Microsoft Edge",
    "Library/Safari",
    "Library/Cookies",
    "Library/Keychains",
];

/// The `~/.config` places under `$XDG_CONFIG_HOME`, when that is set elsewhere, each with
/// its usual name.
fn xdg_places(home: &Path) -> Vec<(PathBuf, String)> {
    let Some(xdg) = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from) else { return Vec::new() };
    if !xdg.is_absolute() || xdg == home.join(".config") {
        return Vec::new();
    }
    HOME_SECRETS
        .iter()
        .filter_map(|s| s.strip_prefix(".config/").map(|rest| (xdg.join(rest), format!("~/{s}"))))
        .collect()
}

/// What kind of secret a path is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Secret {
    /// Another process's environment or memory: refused in every case.
    Process(String),
    /// A secret location of the user (`~/.ssh`), named for messages.
    Location(String),
    /// A `.env`-style file (inside a workspace it may be asked about rather than refused).
    EnvFile(String),
}

impl Secret {
    /// How to name it in a message.
    pub fn describe(&self) -> &str {
        match self {
            Self::Process(s) | Self::Location(s) | Self::EnvFile(s) => s,
        }
    }
}

/// The secret locations of one user.
#[derive(Debug, Clone)]
pub struct Secrets {
    home: PathBuf,
    /// The home as resolved on disk, when that differs (`/home` a symlink to `/var/home`).
    real_home: Option<PathBuf>,
    extra: Vec<PathBuf>,
    /// Other names of the home's places, found the first time one is checked: where a place
    /// (or a folder on its way, `~/.config`) is a link to (dotfiles), and the `.config` places
    /// under `$XDG_CONFIG_HOME` when that is set elsewhere.
    aliases: std::sync::OnceLock<Vec<(PathBuf, String)>>,
}

/// Two lists are the same when made from the same home and paths (the aliases follow).
impl PartialEq for Secrets {
    fn eq(&self, other: &Self) -> bool {
        self.home == other.home && self.real_home == other.real_home && self.extra == other.extra
    }
}

impl Eq for Secrets {}

impl Secrets {
    /// The locations under `home`, plus `extra` paths the application knows (its key file, its
    /// configuration, its saved sessions).
    pub fn new(home: impl Into<PathBuf>, extra: Vec<PathBuf>) -> Self {
        let home = home.into();
        let real_home = Some(crate::path::real_path(&home)).filter(|r| *r != home);
        // Each extra path in both spellings, too.
        let mut all = extra.clone();
        all.extend(extra.iter().map(|p| crate::path::real_path(p)).filter(|r| !extra.contains(r)));
        Self { home, real_home, extra: all, aliases: std::sync::OnceLock::new() }
    }

    /// The other names of the home's places (see the field).
    fn aliases(&self) -> &[(PathBuf, String)] {
        self.aliases.get_or_init(|| {
            let mut out: Vec<(PathBuf, String)> = xdg_places(&self.home);
            for s in HOME_SECRETS {
                let plain = self.home.join(s);
                let real = crate::path::real_path(&plain);
                if real != plain && self.real_home.as_ref().is_none_or(|h| real != h.join(s)) {
                    out.push((real, format!("~/{s}")));
                }
            }
            out
        })
    }

    /// The locations under `$HOME`, with no extra paths.
    pub fn from_env() -> Self {
        let home = std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE")).map(PathBuf::from);
        Self::new(home.unwrap_or_else(|| PathBuf::from("/nonexistent-home")), Vec::new())
    }

    /// Every location as a path (the home's and the application's), for the sandbox to hide
    /// from commands; `.env` files and `/proc` are not places and are not in it.
    pub fn places(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = HOME_SECRETS.iter().map(|s| self.home.join(s)).collect();
        out.extend(self.extra.iter().cloned());
        // The sandbox follows links itself; only the places under `$XDG_CONFIG_HOME` are added
        // (no disk is touched: a session's start pays nothing for it).
        out.extend(xdg_places(&self.home).into_iter().map(|(p, _)| p));
        out
    }

    /// The home directory these locations are in.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// Whether `path` (absolute, already normalized; symlinks resolved by the caller when it
    /// matters) is, or is inside, a secret location.
    pub fn check(&self, path: &Path) -> Option<Secret> {
        if let Some(what) = proc_secret(path) {
            return Some(Secret::Process(what));
        }
        for home in std::iter::once(&self.home).chain(self.real_home.as_ref()) {
            for s in HOME_SECRETS {
                if path.starts_with(home.join(s)) {
                    return Some(Secret::Location(format!("~/{s}")));
                }
            }
        }
        for p in &self.extra {
            if path.starts_with(p) {
                return Some(Secret::Location(p.display().to_string()));
            }
        }
        for (p, named) in self.aliases() {
            if path.starts_with(p) {
                return Some(Secret::Location(named.clone()));
            }
        }
        let name = path.file_name()?.to_str()?;
        is_env_file(name).then(|| Secret::EnvFile(name.to_owned()))
    }
}

impl Secrets {
    /// The secret location a partly known path mentions (`$X/.ssh/id_rsa`, `${D}/.aws`), for
    /// words whose beginning is only known at run time.
    pub fn mentions(&self, text: &str) -> Option<String> {
        let padded = format!("{}/", text.trim_end_matches('/'));
        for s in HOME_SECRETS {
            if padded.contains(&format!("/{s}/")) || padded.starts_with(&format!("{s}/")) {
                return Some(format!("~/{s}"));
            }
        }
        let name = text.rsplit('/').next().unwrap_or(text);
        is_env_file(name).then(|| name.to_owned())
    }
}

/// `.env`, `.env.local`, `.envrc`; not the committed examples.
fn is_env_file(name: &str) -> bool {
    if name == ".envrc" || name == ".env" {
        return true;
    }
    match name.strip_prefix(".env.") {
        Some(rest) => !matches!(rest, "example" | "sample" | "template" | "dist" | "defaults"),
        None => false,
    }
}

/// `/proc/<pid|self|thread-self>/environ|mem`, also through `task/<tid>/`.
fn proc_secret(path: &Path) -> Option<String> {
    let rest = path.strip_prefix("/proc").ok()?;
    let parts: Vec<&str> = rest.iter().filter_map(|p| p.to_str()).collect();
    let last = *parts.last()?;
    (parts.len() >= 2 && matches!(last, "environ" | "mem")).then(|| format!("/proc/…/{last}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_locations_are_found_and_ordinary_files_are_not() {
        let s = Secrets::new("/home/u", vec![PathBuf::from("/home/u/.octo/config.toml")]);
        let check = |p: &str| s.check(Path::new(p));
        assert_eq!(check("/home/u/.ssh/id_rsa"), Some(Secret::Location("~/.ssh".into())));
        assert!(matches!(check("/home/u/.docker/config.json"), Some(Secret::Location(_))));
        assert!(matches!(check("/home/u/.octo/config.toml"), Some(Secret::Location(_))));
        assert!(matches!(check("/home/u/.config/google-chrome/Default/Cookies"), Some(Secret::Location(_))));
        for more in
            [".claude/.credentials.json", ".codex/auth.json", ".config/git/credentials", ".bash_history"]
        {
            assert!(matches!(check(&format!("/home/u/{more}")), Some(Secret::Location(_))), "{more}");
        }
        assert_eq!(check("/home/u/.claude/settings.json"), None, "Claude Code's settings are not a secret");

        assert!(matches!(check("/proc/self/environ"), Some(Secret::Process(_))));
        assert!(matches!(check("/proc/1234/task/1235/mem"), Some(Secret::Process(_))));
        assert!(matches!(check("/ws/app/.env"), Some(Secret::EnvFile(_))));
        assert!(matches!(check("/ws/.env.production"), Some(Secret::EnvFile(_))));
        for fine in [
            "/home/u/.bashrc",
            "/home/u/.sshd_notes",
            "/ws/.env.example",
            "/proc/cpuinfo",
            "/home/u/.octo/output/x",
            "/ws/src/env.rs",
        ] {
            assert_eq!(check(fine), None, "{fine}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_place_reached_through_a_link_is_a_secret_by_its_real_name_too() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(home.join("dotfiles/gh")).unwrap();
        std::fs::create_dir_all(home.join(".config")).unwrap();
        std::fs::write(home.join("dotfiles/gh/hosts.yml"), "oauth_token: x").unwrap();
        std::os::unix::fs::symlink(home.join("dotfiles/gh"), home.join(".config/gh")).unwrap();
        let s = Secrets::new(&home, Vec::new());
        let real = crate::path::real_path(&home.join("dotfiles/gh/hosts.yml"));
        assert_eq!(s.check(&real), Some(Secret::Location("~/.config/gh/hosts.yml".into())));
        // The sandbox resolves links itself (`Policy::secret_places`).
        assert!(s.places().contains(&home.join(".config/gh/hosts.yml")));
    }
}

/// What kind of credential `text` seems to contain (`an Anthropic API key`), if any: vendor key
/// formats, private keys, and `token = <long value>` assignments. For refusing to store secrets
/// where they would be read into later prompts (memory).
pub fn credential_in(text: &str) -> Option<&'static str> {
    credential_patterns().iter().find(|(r, _)| r.is_match(text)).map(|(_, what)| *what)
}

/// `text` with every credential [`credential_in`] would find replaced by `[redacted]` (for logs).
pub fn redact_credentials(text: &str) -> String {
    let mut out = text.to_owned();
    for (r, _) in credential_patterns() {
        if r.is_match(&out) {
            out = r.replace_all(&out, "[redacted]").into_owned();
        }
    }
    out
}

fn credential_patterns() -> &'static [(regex::Regex, &'static str)] {
    static PATTERNS: std::sync::OnceLock<Vec<(regex::Regex, &'static str)>> = std::sync::OnceLock::new();
    PATTERNS.get_or_init(|| {
        [
            (r"sk-ant-[A-Za-z0-9_-]{20,}", "an Anthropic API key"),
            (r"\bsk-(proj-)?[A-Za-z0-9_-]{20,}", "an OpenAI-style API key"),
            (r"\bAKIA[0-9A-Z]{16}\b", "an AWS access key"),
            (r"\bgh[pousr]_[A-Za-z0-9]{30,}", "a GitHub token"),
            (r"\bgithub_pat_[A-Za-z0-9_]{30,}", "a GitHub token"),
            (r"\bxox[abposr]-[A-Za-z0-9-]{10,}", "a Slack token"),
            (r"\bAIza[0-9A-Za-z_-]{35}\b", "a Google API key"),
            (r"\bglpat-[A-Za-z0-9_-]{20,}", "a GitLab token"),
            (r"-----BEGIN [A-Z ]*PRIVATE KEY-----", "a private key"),
            (
                r#"(?i)\b(api[_-]?key|secret|token|password|passwd)\b["']?\s*[:=]\s*["']?[A-Za-z0-9_\-+/=.]{12,}"#,
                "a credential assignment",
            ),
        ]
        .into_iter()
        .filter_map(|(p, what)| regex::Regex::new(p).ok().map(|r| (r, what)))
        .collect()
    })
}

#[cfg(test)]
mod credential_tests {
    use super::{credential_in, redact_credentials};

    #[test]
    fn credentials_are_recognised_and_prose_is_not() {
        assert_eq!(credential_in("key sk-ant-api03-abcdefghijklmnopqrstuvwx"), Some("an Anthropic API key"));
        assert_eq!(credential_in("AKIAIOSFODNN7EXAMPLE"), Some("an AWS access key"));
        assert_eq!(credential_in("use ghp_0123456789abcdef0123456789abcdef0123"), Some("a GitHub token"));
        assert_eq!(credential_in("password = hunter2hunter2x"), Some("a credential assignment"));
        assert!(credential_in("-----BEGIN OPENSSH PRIVATE KEY-----").is_some());
        assert_eq!(credential_in("The user prefers tabs; the API key lives in the keyring."), None);
        assert_eq!(credential_in("token budget is 4096"), None);
        assert_eq!(
            redact_credentials(r#"{"command":"curl -H 'x: sk-ant-api03-abcdefghijklmnopqrstuvwx' u"}"#),
            r#"{"command":"curl -H 'x: [redacted]' u"}"#
        );
    }
}
