//! Assembling the system prompt, in a fixed order: octo's base prompt, the environment, the user's
//! rules, the project's rules, then the skills and memory slots. It is built once per session and
//! kept byte-stable so the provider's prompt cache holds.

use std::path::{Path, PathBuf};

/// Rules files larger than this are cut (with a note).
pub const MAX_RULES_BYTES: usize = 32 * 1024;
/// How deep `@include` may nest.
const MAX_INCLUDE_DEPTH: usize = 5;

/// octo's own instructions.
pub const BASE_PROMPT: &str = "You are octo, a coding agent working in the user's repository through tools.

How to work:
- Understand before changing: find the code with grep and glob, read it with read_file.
- Make focused changes with edit_file (write_file for new files), in the surrounding style.
- Verify: build, run the tests or the program with terminal, and fix what fails.
- Track work of several steps with todo_write. Ask the user (ask_user) only about their decisions.

How to answer:
- Be concise. Lead with the result; say what you verified and what is left undone.
- Refer to code as path:line. Never invent files, APIs or results, nor expose secrets you come across.";

/// What goes into the environment section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Environment {
    /// Operating system.
    pub os: String,
    /// The shell commands run with.
    pub shell: String,
    /// The workspace.
    pub cwd: PathBuf,
    /// The branch (`branch main`, `detached at 1a2b3c4`), when the workspace is in a git
    /// repository.
    pub git: Option<String>,
    /// Today's date (YYYY-MM-DD).
    pub date: String,
    /// `endpoint:model`.
    pub model: String,
}

impl Environment {
    /// Reads the environment of `cwd` (files only: no child process).
    pub fn detect(cwd: &Path, model: &str) -> Self {
        Self {
            os: format!("{} ({})", std::env::consts::OS, std::env::consts::ARCH),
            shell: if cfg!(windows) { "PowerShell".into() } else { "sh".into() },
            cwd: cwd.to_path_buf(),
            git: crate::git_head::describe(cwd),
            date: today(),
            model: model.to_owned(),
        }
    }
}

/// Today's date in UTC as YYYY-MM-DD, without a date library.
fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() / 86_400)
        .unwrap_or(0);
    let (y, m, d) = octo_session::civil_from_days(days as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The parts of the prompt, in order.
#[derive(Debug, Clone, Default)]
pub struct PromptParts {
    /// Replaces octo's base prompt when set (`--system`).
    pub base_override: Option<String>,
    /// Skills (filled by a later feature).
    pub skills: Option<String>,
    /// Memory (filled by a later feature).
    pub memory: Option<String>,
    /// Text added at the very end (`--append-system-prompt`).
    pub append: Option<String>,
}

/// The project's rule files read into every prompt, in this order. The permission engine
/// protects the same names (a file tool writing one is asked about in every mode).
pub const PROJECT_RULES: &[&str] = &[".octorules", "AGENTS.md", "CLAUDE.md"];

/// Builds the system prompt for a session in `cwd`, reading the user's rules (`octorules.md` in
/// octo's home) and the project's
/// `.octorules`, `AGENTS.md` and `CLAUDE.md`.
pub fn assemble(home: &crate::home::Home, env: &Environment, parts: &PromptParts) -> String {
    assemble_with_sources(home, env, parts).0
}

/// [`assemble`], and every file the project's rules read or would read (the rules files and
/// their `@include` targets, also missing ones): a change to any of them steers later sessions,
/// so the permission engine protects them.
pub fn assemble_with_sources(
    home: &crate::home::Home,
    env: &Environment,
    parts: &PromptParts,
) -> (String, Vec<PathBuf>) {
    let mut sources = Vec::new();
    let mut out = String::new();
    out.push_str(parts.base_override.as_deref().unwrap_or(BASE_PROMPT).trim());
    out.push_str("\n\n# Environment\n");
    out.push_str(&format!("- Working directory: {}\n", env.cwd.display()));
    match &env.git {
        Some(g) => out.push_str(&format!("- Git repository: {g}\n")),
        None => out.push_str("- Not a git repository\n"),
    }
    out.push_str(&format!(
        "- OS: {}; shell: {}\n- Date: {}\n- Model: {}\n",
        env.os, env.shell, env.date, env.model
    ));
    let user = home.rules_file();
    if let Some(text) = load_rules_noting(&user, &mut sources) {
        out.push_str(&format!("\n# User rules ({})\n{text}\n", user.display()));
    }
    let mut seen: Vec<PathBuf> = Vec::new();
    for name in PROJECT_RULES {
        let p = env.cwd.join(name);
        let real = p.canonicalize().unwrap_or_else(|_| p.clone());
        if seen.contains(&real) {
            continue;
        }
        if let Some(text) = load_rules_noting(&p, &mut sources) {
            seen.push(real);
            out.push_str(&format!("\n# Project rules ({name})\n{text}\n"));
        }
    }
    if let Some(s) = parts.skills.as_deref().filter(|s| !s.trim().is_empty()) {
        out.push_str(&format!("\n# Skills\n{}\n", s.trim()));
    }
    if let Some(m) = parts.memory.as_deref().filter(|s| !s.trim().is_empty()) {
        out.push_str(&format!("\n# Memory\n{}\n", m.trim()));
    }
    if let Some(a) = parts.append.as_deref().filter(|s| !s.trim().is_empty()) {
        out.push_str(&format!("\n{}\n", a.trim()));
    }
    (out, sources)
}

/// A rules file with its `@include`s expanded and its size capped; `None` when it does not exist.
/// Includes must stay inside the rules file's own directory tree.
pub fn load_rules(path: &Path) -> Option<String> {
    load_rules_noting(path, &mut Vec::new())
}

/// [`load_rules`], noting every file it reads or tries to include in `sources`.
fn load_rules_noting(path: &Path, sources: &mut Vec<PathBuf>) -> Option<String> {
    let text = read_capped(path).ok()?;
    sources.push(path.to_path_buf());
    let root = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let root = root.canonicalize().unwrap_or(root);
    let mut stack = vec![path.canonicalize().unwrap_or_else(|_| path.to_path_buf())];
    let expanded = expand(&text, path.parent().unwrap_or(Path::new(".")), &root, &mut stack, sources);
    Some(cap(expanded.trim()))
}

/// Reads at most a little more than the cap (so `/dev/zero` or a huge file cannot stall start-up).
fn read_capped(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut buf = Vec::new();
    std::fs::File::open(path)?.take((MAX_RULES_BYTES * 2) as u64).read_to_end(&mut buf)?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

fn expand(
    text: &str,
    dir: &Path,
    root: &Path,
    stack: &mut Vec<PathBuf>,
    sources: &mut Vec<PathBuf>,
) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let Some(target) = line.trim().strip_prefix("@include ").map(str::trim) else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let path = dir.join(target);
        let real = path.canonicalize().unwrap_or_else(|_| path.clone());
        sources.push(path.clone());
        if path.exists() && !real.starts_with(root) {
            out.push_str(&format!("[@include {target} skipped: it is outside {}]\n", root.display()));
        } else if octo_tools::secrets::Secrets::from_env().check(&real).is_some() {
            // A rules file must not pull a secret (`.env`) into what is sent to the model.
            out.push_str(&format!("[@include {target} skipped: it holds secrets]\n"));
        } else if stack.contains(&real) {
            out.push_str(&format!("[@include {target} skipped: it includes itself]\n"));
        } else if stack.len() > MAX_INCLUDE_DEPTH {
            out.push_str(&format!(
                "[@include {target} skipped: includes nest deeper than {MAX_INCLUDE_DEPTH}]\n"
            ));
        } else {
            match read_capped(&path) {
                Ok(inner) => {
                    stack.push(real);
                    out.push_str(&expand(&inner, path.parent().unwrap_or(dir), root, stack, sources));
                    stack.pop();
                }
                Err(e) => out.push_str(&format!("[@include {target} skipped: {e}]\n")),
            }
        }
    }
    out
}

fn cap(text: &str) -> String {
    if text.len() <= MAX_RULES_BYTES {
        return text.to_owned();
    }
    let mut end = MAX_RULES_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n[... rules cut at {} KB]", &text[..end], MAX_RULES_BYTES / 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(cwd: &Path) -> Environment {
        Environment {
            os: "linux (x86_64)".into(),
            shell: "sh".into(),
            cwd: cwd.to_path_buf(),
            git: Some("branch main".into()),
            date: "2026-11-30".into(),
            model: "anthropic:claude-sonnet-4-5".into(),
        }
    }

    #[test]
    fn order_includes_and_bad_includes() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let ws = tmp.path().join("ws");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(ws.join("docs")).unwrap();
        std::fs::write(home.join("octorules.md"), "Always answer in English.").unwrap();
        std::fs::write(
            ws.join(".octorules"),
            "Use tabs.\n@include docs/style.md\n@include missing.md\n@include .octorules",
        )
        .unwrap();
        std::fs::write(ws.join("docs/style.md"), "Max line 100.\n@include ../.octorules").unwrap();
        std::fs::write(ws.join("AGENTS.md"), "Run make test.").unwrap();
        let parts =
            PromptParts { memory: Some("The user prefers short answers.".into()), ..PromptParts::default() };
        let p = assemble(&crate::home::Home::new(&home), &env(&ws), &parts)
            .replace(&tmp.path().display().to_string(), "<tmp>");
        insta::assert_snapshot!(p);
        let a = assemble(&crate::home::Home::new(&home), &env(&ws), &parts);
        assert_eq!(a, assemble(&crate::home::Home::new(&home), &env(&ws), &parts), "stable across calls");
    }

    #[test]
    fn includes_stay_inside_the_project() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(tmp.path().join("secret.txt"), "TOKEN=abc").unwrap();
        std::fs::write(ws.join("AGENTS.md"), "@include ../secret.txt\n@include /dev/zero").unwrap();
        let r = load_rules(&ws.join("AGENTS.md")).unwrap();
        assert!(!r.contains("TOKEN"), "{r}");
        assert!(r.contains("skipped: it is outside"), "{r}");
    }

    #[test]
    fn big_rules_are_capped() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("CLAUDE.md"), "é".repeat(40_000)).unwrap();
        let r = load_rules(&tmp.path().join("CLAUDE.md")).unwrap();
        assert!(r.len() < MAX_RULES_BYTES + 100 && r.ends_with("[... rules cut at 32 KB]"));
        assert_eq!(load_rules(&tmp.path().join("nope.md")), None);
    }
}
