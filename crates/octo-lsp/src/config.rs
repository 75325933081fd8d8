//! Which language servers exist: the user's `[lsp.<name>]` tables and the built-in defaults,
//! which apply only when their program is on `PATH`.

use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One server as configured (`[lsp.<name>]`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// The program (a name looked up on `PATH`, or a path).
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// The file extensions it serves, without the dot (`rs`, `py`).
    pub extensions: Vec<String>,
    /// Files or folders that mark a project's root (`Cargo.toml`); the nearest one above a file,
    /// inside the workspace, roots its server (else the workspace does).
    #[serde(default)]
    pub root_markers: Vec<String>,
    /// Sent as `initializationOptions`.
    #[serde(default)]
    pub initialization_options: Option<Value>,
    /// Variables set for it.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Its settings: sent in `workspace/didChangeConfiguration` after it starts, and what it is
    /// answered when it asks for `workspace/configuration` (by section).
    #[serde(default)]
    pub settings: Option<Value>,
    /// The language id sent for an extension (`gd = "gdscript"`), where octo's own table does
    /// not know it.
    #[serde(default)]
    pub language_ids: BTreeMap<String, String>,
    /// Turned off (a built-in default the user does not want).
    #[serde(default)]
    pub disabled: bool,
}

/// A server that can run here: its name, configuration and program found.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// Its name (`rust-analyzer`, `pyright`, a configured table's key).
    pub name: String,
    /// How it is configured.
    pub config: ServerConfig,
    /// Where its program is, or `None` when it is not installed.
    pub program: Option<PathBuf>,
    /// Whether the user configured it (else it is a built-in default).
    pub configured: bool,
}

fn builtin(
    name: &str,
    command: &str,
    args: &[&str],
    extensions: &[&str],
    markers: &[&str],
) -> (String, ServerConfig) {
    let strings = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    (
        name.to_owned(),
        ServerConfig {
            command: command.to_owned(),
            args: strings(args),
            extensions: strings(extensions),
            root_markers: strings(markers),
            initialization_options: None,
            env: BTreeMap::new(),
            settings: None,
            language_ids: BTreeMap::new(),
            disabled: false,
        },
    )
}

/// The built-in defaults, in order of preference for a language (the first found serves it).
pub fn defaults() -> Vec<(String, ServerConfig)> {
    let py = ["py", "pyi"];
    let py_markers = ["pyproject.toml", "setup.py", "setup.cfg", "pyrightconfig.json", "requirements.txt"];
    vec![
        builtin("rust-analyzer", "rust-analyzer", &[], &["rs"], &["Cargo.toml"]),
        builtin("basedpyright", "basedpyright-langserver", &["--stdio"], &py, &py_markers),
        builtin("pyright", "pyright-langserver", &["--stdio"], &py, &py_markers),
        builtin("gopls", "gopls", &[], &["go"], &["go.mod", "go.work"]),
        builtin(
            "typescript-language-server",
            "typescript-language-server",
            &["--stdio"],
            &["ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts"],
            &["tsconfig.json", "jsconfig.json", "package.json"],
        ),
        builtin(
            "clangd",
            "clangd",
            &["--background-index=false"],
            &["c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx"],
            &["compile_commands.json", "compile_flags.txt", ".clangd", "CMakeLists.txt"],
        ),
        builtin("bash-language-server", "bash-language-server", &["start"], &["sh", "bash"], &[]),
    ]
}

/// The servers for a session: the user's tables first (a table named like a default replaces
/// it; `disabled = true` removes it), then the defaults whose program is installed. `path` is
/// the `PATH` to look programs up in.
pub fn resolve(user: &BTreeMap<String, ServerConfig>, path: Option<&std::ffi::OsStr>) -> Vec<Resolved> {
    let mut out: Vec<Resolved> = user
        .iter()
        .filter(|(_, c)| !c.disabled)
        .map(|(name, c)| Resolved {
            name: name.clone(),
            config: c.clone(),
            program: find(&c.command, path),
            configured: true,
        })
        .collect();
    for (name, c) in defaults() {
        if user.contains_key(&name) {
            continue;
        }
        if let Some(program) = find(&c.command, path) {
            out.push(Resolved { name, config: c, program: Some(program), configured: false });
        }
    }
    out
}

/// `command` found: a path as it is (if it exists), a name on `path`.
fn find(command: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    if command.contains('/') {
        let p = PathBuf::from(command);
        return p.is_file().then_some(p);
    }
    std::env::split_paths(path?).map(|dir| dir.join(command)).find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}

/// The protocol's language id for a file extension.
pub fn language_id(extension: &str) -> &str {
    match extension {
        "rs" => "rust",
        "py" | "pyi" => "python",
        "go" => "go",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "cpp",
        "sh" | "bash" => "shellscript",
        "java" => "java",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_apply_only_when_installed_and_tables_replace_them() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("clangd");
        std::fs::write(&bin, "#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let path = dir.path().as_os_str();
        let names: Vec<String> = resolve(&BTreeMap::new(), Some(path)).into_iter().map(|r| r.name).collect();
        assert_eq!(names, ["clangd"], "only the installed default");
        let table: ServerConfig =
            toml_like(r#"{"command": "my-pyls", "extensions": ["py"], "args": ["--stdio"]}"#);
        let off: ServerConfig = toml_like(r#"{"command": "clangd", "extensions": ["c"], "disabled": true}"#);
        let user = BTreeMap::from([("mine".to_owned(), table), ("clangd".to_owned(), off)]);
        let got = resolve(&user, Some(path));
        assert_eq!(got.len(), 1, "clangd disabled, mine configured: {got:?}");
        assert!(got[0].configured && got[0].program.is_none(), "configured but not installed: still listed");
    }

    #[test]
    fn unknown_keys_are_refused() {
        let bad: Result<ServerConfig, _> =
            serde_json::from_str(r#"{"command": "x", "extensions": [], "colour": 1}"#);
        assert!(bad.is_err());
    }

    fn toml_like(json: &str) -> ServerConfig {
        serde_json::from_str(json).unwrap()
    }
}
