//! Which environment variables the commands the model runs may see. By default every variable
//! except those whose names look secret (`*KEY*`, `*SECRET*`, `*TOKEN*`, `*PASSWORD*`, …): an API
//! key in octo's environment must not reach `env`, a command's output or a session file.

use std::collections::BTreeMap;
use std::ffi::OsString;

/// Which of octo's variables commands start from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Inherit {
    /// All of them (minus the excluded ones).
    #[default]
    All,
    /// Only the basics: `PATH`, `HOME`, `USER`, `LOGNAME`, `SHELL`, `TERM`, `LANG`, `LC_*`,
    /// `TMPDIR`, `TZ`.
    Core,
    /// None.
    None,
}

impl std::fmt::Display for Inherit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::All => "all",
            Self::Core => "core",
            Self::None => "none",
        })
    }
}

impl std::str::FromStr for Inherit {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "all" => Ok(Self::All),
            "core" => Ok(Self::Core),
            "none" => Ok(Self::None),
            other => Err(format!("`{other}` is not all, core or none")),
        }
    }
}

/// Names removed unless `include` keeps them (matched without regard to case).
pub const DEFAULT_EXCLUDES: &[&str] = &[
    "*KEY*",
    "*SECRET*",
    "*TOKEN*",
    "*PASSWORD*",
    "*PASSWD*",
    "*PASSPHRASE*",
    "*CREDENTIAL*",
    "*_PAT",
    "*_PWD",
];

const CORE: &[&str] =
    &["PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LANGUAGE", "LC_*", "TMPDIR", "TZ"];

/// The environment policy of commands.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ShellEnv {
    /// Which variables commands start from.
    pub inherit: Inherit,
    /// More names to remove (`*` matches any run of characters).
    pub exclude: Vec<String>,
    /// Names to keep although they look secret.
    pub include: Vec<String>,
    /// Variables set for every command.
    pub set: BTreeMap<String, String>,
    /// A file of `export NAME=value` lines read for each command, after `set` (Claude Code's
    /// `CLAUDE_ENV_FILE`, which the session's SessionStart hooks write; `env_file`).
    pub env_file: Option<std::path::PathBuf>,
}

/// Whether `name` matches the glob `pattern` (`*` only), ignoring case.
fn matches(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.to_ascii_uppercase(), name.to_ascii_uppercase());
    let parts: Vec<&str> = p.split('*').collect();
    if parts.len() == 1 {
        return p == n;
    }
    let mut rest = n.as_str();
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            let Some(r) = rest.strip_prefix(part) else { return false };
            rest = r;
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            let Some(at) = rest.find(part) else { return false };
            rest = &rest[at + part.len()..];
        }
    }
    true
}

impl ShellEnv {
    /// Whether a variable named `name` reaches commands (before `set`).
    pub fn keeps(&self, name: &str) -> bool {
        let inherited = match self.inherit {
            Inherit::All => true,
            Inherit::Core => CORE.iter().any(|p| matches(p, name)),
            Inherit::None => false,
        };
        if !inherited {
            return false;
        }
        let included = self.include.iter().any(|p| matches(p, name));
        let excluded = DEFAULT_EXCLUDES.iter().any(|p| matches(p, name))
            || self.exclude.iter().any(|p| matches(p, name));
        included || !excluded
    }

    /// The environment a command gets, from `vars` (octo's own).
    pub fn build(&self, vars: impl Iterator<Item = (OsString, OsString)>) -> Vec<(OsString, OsString)> {
        let mut out: Vec<(OsString, OsString)> =
            vars.filter(|(k, _)| k.to_str().is_some_and(|k| self.keeps(k))).collect();
        for (k, v) in &self.set {
            out.retain(|(name, _)| name.to_str() != Some(k.as_str()));
            out.push((k.into(), v.into()));
        }
        if let Some(f) = &self.env_file {
            crate::env_file::apply(f, &mut out);
        }
        out
    }

    /// Gives `cmd` exactly this environment.
    pub fn apply(&self, cmd: &mut std::process::Command) {
        cmd.env_clear();
        cmd.envs(self.build(std::env::vars_os()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars() -> impl Iterator<Item = (OsString, OsString)> {
        [
            ("PATH", "/bin"),
            ("HOME", "/home/u"),
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("AWS_SECRET_ACCESS_KEY", "aws"),
            ("GITHUB_TOKEN", "ghp"),
            ("db_password", "pw"),
            ("MYSQL_PWD", "pw"),
            ("GITLAB_PAT", "glpat"),
            ("PWD", "/ws"),
            ("LC_ALL", "C"),
            ("EDITOR", "vi"),
        ]
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
    }

    fn names(env: &ShellEnv) -> Vec<String> {
        env.build(vars()).into_iter().map(|(k, _)| k.to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn secret_looking_names_are_removed_unless_kept() {
        assert_eq!(names(&ShellEnv::default()), ["PATH", "HOME", "PWD", "LC_ALL", "EDITOR"]);
        let env = ShellEnv {
            include: vec!["GITHUB_TOKEN".into()],
            exclude: vec!["EDIT*".into()],
            ..ShellEnv::default()
        };
        assert_eq!(names(&env), ["PATH", "HOME", "GITHUB_TOKEN", "PWD", "LC_ALL"]);
        let core = ShellEnv { inherit: Inherit::Core, ..ShellEnv::default() };
        assert_eq!(names(&core), ["PATH", "HOME", "LC_ALL"]);
        let none = ShellEnv {
            inherit: Inherit::None,
            set: [("PATH".to_owned(), "/usr/bin".to_owned())].into(),
            ..ShellEnv::default()
        };
        assert_eq!(none.build(vars()), [(OsString::from("PATH"), OsString::from("/usr/bin"))]);
        assert!(matches("*key*", "MY_KEY_FILE") && !matches("*KEY", "KEYS") && matches("LC_*", "lc_all"));
    }
}
