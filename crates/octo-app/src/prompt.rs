//! Assembling the system prompt, in a fixed order: octo's base prompt, the environment, the user's
//! rules, the project's rules, then the skills and memory slots. It is built once per session and
//! kept byte-stable so the provider's prompt cache holds.

use std::path::{Path, PathBuf};

/// Rules files larger than this are cut (with a note).
pub(crate) const MAX_RULES_BYTES: usize = 32 * 1024;
/// How deep `@include` may nest.
const MAX_INCLUDE_DEPTH: usize = 5;

/// octo's own instructions.
pub(crate) const BASE_PROMPT: &str =
    "You are octo, a coding agent working in the user's repository through tools.

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
    /// The user's home (`~/.claude/CLAUDE.md` is read from it, and its secret locations are
    /// never included).
    pub user_home: Option<PathBuf>,
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
            user_home: std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from),
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
pub use octo_permissions::protected::PROJECT_RULES;

/// Builds the system prompt for a session in `cwd`, reading the user's rules (`octorules.md` in
/// octo's home) and the project's
/// `.octorules`, `AGENTS.md` and `CLAUDE.md`.
#[cfg(test)]
pub(crate) fn assemble(home: &crate::home::Home, env: &Environment, parts: &PromptParts) -> String {
    assemble_with_sources(home, env, parts).0
}

/// The system prompt for a session in `cwd` (the user's rules, `octorules.md` in octo's home,
/// and the project's `.octorules`, `AGENTS.md` and `CLAUDE.md`), and every file the project's rules read or would read (the rules files and
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
    let guard = Guard { secrets: home.secrets(env.user_home.clone(), None), inside: None };
    if let Some(text) = load_rules_in(&user, &mut sources, env.user_home.clone(), &guard) {
        out.push_str(&format!("\n# User rules ({})\n{text}\n", user.display()));
    }
    // A Claude Code user's own instructions, as Claude Code reads them in every project.
    if let Some(claude) = env.user_home.as_ref().map(|h| h.join(".claude/CLAUDE.md")) {
        if let Some(text) = load_rules_in(&claude, &mut sources, env.user_home.clone(), &guard) {
            out.push_str(&format!("\n# User rules (~/.claude/CLAUDE.md)\n{text}\n"));
        }
    }
    let mut seen: Vec<PathBuf> = Vec::new();
    // Claude Code's too: `.claude/CLAUDE.md`, the rules in `.claude/rules/` that apply to every
    // file, and the personal `CLAUDE.local.md` last.
    let rules = claude_rules(&env.cwd);
    let names = PROJECT_RULES.iter().map(|n| (*n).to_owned()).chain([".claude/CLAUDE.md".to_owned()]);
    let names = names.chain(rules).chain([octo_permissions::protected::CLAUDE_LOCAL.to_owned()]);
    for name in names {
        let p = env.cwd.join(&name);
        let real = p.canonicalize().unwrap_or_else(|_| p.clone());
        if seen.contains(&real) {
            continue;
        }
        if let Some(text) = load_rules_in(&p, &mut sources, env.user_home.clone(), &guard) {
            seen.push(real);
            let text = if name.starts_with(".claude/rules/") { rule_body(&text) } else { text };
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

/// The Markdown files under the project's `.claude/rules/` (sorted, two folders deep at most)
/// that apply everywhere: a rule whose frontmatter names `paths:` applies only to work on those
/// files and is not read at start (`nested_rules` adds it when work reaches them).
fn claude_rules(cwd: &Path) -> Vec<String> {
    let everywhere =
        |rel: &String| std::fs::read_to_string(cwd.join(rel)).is_ok_and(|t| paths_of(&t).is_none());
    rule_files(cwd).into_iter().filter(everywhere).collect()
}

/// The rules under `.claude/rules/` that name `paths:`: each one's name, globs and text.
pub(crate) fn conditional_rules(cwd: &Path) -> Vec<(String, Vec<String>, String)> {
    rule_files(cwd)
        .into_iter()
        .filter_map(|rel| {
            let text = load_rules_inside(&cwd.join(&rel), cwd)?;
            let globs = paths_of(&text)?;
            Some((rel, globs, rule_body(&text)))
        })
        .collect()
}

/// Every Markdown file under `.claude/rules/`, relative to `cwd`, sorted.
fn rule_files(cwd: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut dirs = vec![(cwd.join(".claude/rules"), 0)];
    while let Some((dir, depth)) = dirs.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else { continue };
        for e in rd.flatten() {
            let Ok(kind) = e.file_type() else { continue };
            let path = e.path();
            if kind.is_dir() && depth < 2 {
                dirs.push((path, depth + 1));
            } else if kind.is_file() && path.extension().is_some_and(|x| x == "md") {
                if let Ok(rel) = path.strip_prefix(cwd) {
                    out.push(rel.to_string_lossy().into_owned());
                }
            }
        }
    }
    out.sort();
    out
}

/// The globs a rule's frontmatter limits it to (`paths:`, a list or one string), if any.
fn paths_of(text: &str) -> Option<Vec<String>> {
    let split = octo_skills::frontmatter::split(text).ok()?;
    let v = octo_skills::frontmatter::value(split.yaml?).ok()?;
    let paths = v.get("paths").filter(|p| !p.is_null())?;
    if let Some(one) = paths.as_str() {
        return Some(split_globs(one));
    }
    let list = paths.as_sequence().map(|l| l.iter().filter_map(|p| p.as_str().map(str::to_owned)).collect());
    Some(list.unwrap_or_default())
}

/// `a, b/{c,d}` → `a`, `b/{c,d}`: commas outside braces separate globs.
fn split_globs(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth) = (Vec::new(), String::new(), 0usize);
    for c in s.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out.iter().map(|p| p.trim().trim_matches(['"', '\'']).to_owned()).filter(|p| !p.is_empty()).collect()
}

/// A rule's text without its frontmatter.
fn rule_body(text: &str) -> String {
    octo_skills::frontmatter::split(text).map_or_else(|_| text.to_owned(), |s| s.body.trim().to_owned())
}

/// A rules file with its `@include`s expanded and its size capped; `None` when it does not exist.
/// Includes must stay inside the rules file's own directory tree; octo's and the user's secret
/// places are never read.
pub(crate) fn load_rules(path: &Path) -> Option<String> {
    let user_home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    let guard =
        Guard { secrets: crate::home::Home::from_env().secrets(user_home.clone(), None), inside: None };
    load_rules_in(path, &mut Vec::new(), user_home, &guard)
}

/// [`load_rules`] for a file that must lie in `root` (a subfolder's rules): checked on the file
/// as opened, so a link swapped in between cannot point the read elsewhere.
pub(crate) fn load_rules_inside(path: &Path, root: &Path) -> Option<String> {
    let user_home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    let secrets = crate::home::Home::from_env().secrets(user_home.clone(), None);
    let guard = Guard { secrets, inside: Some(root.canonicalize().ok()?) };
    load_rules_in(path, &mut Vec::new(), user_home, &guard)
}

/// What a rules file and its includes may be: never a secret place (octo's or the user's), and
/// inside `inside` when given.
struct Guard {
    secrets: octo_tools::secrets::Secrets,
    inside: Option<PathBuf>,
}

impl Guard {
    fn allows(&self, real: &Path) -> bool {
        self.secrets.check(real).is_none() && self.inside.as_ref().is_none_or(|r| real.starts_with(r))
    }
}

/// A rules file for the user whose home is `user_home` (Claude Code's imports may come from it),
/// read as `guard` allows, noting every file it reads or tries to include in `sources`.
fn load_rules_in(
    path: &Path,
    sources: &mut Vec<PathBuf>,
    user_home: Option<PathBuf>,
    guard: &Guard,
) -> Option<String> {
    let text = read_capped(path, &|real| guard.allows(real)).ok()?;
    sources.push(path.to_path_buf());
    let root = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let root = root.canonicalize().unwrap_or(root);
    let claude = path.file_name().is_some_and(|n| n == "CLAUDE.md" || n == "CLAUDE.local.md");
    let mut inc = Includes {
        root,
        claude,
        secrets: guard.secrets.clone(),
        user_home: user_home.map(|h| h.canonicalize().unwrap_or(h)),
        stack: vec![path.canonicalize().unwrap_or_else(|_| path.to_path_buf())],
        sources,
    };
    let expanded = inc.expand(&text, path.parent().unwrap_or(Path::new(".")));
    Some(cap(expanded.trim()))
}

/// Reads at most a little more than the cap (so `/dev/zero` or a huge file cannot stall start-up),
/// when `ok` allows the file as it was opened (its real path, read back from the open file where
/// the system tells it: a link swapped in after a check cannot redirect the read).
fn read_capped(path: &Path, ok: &dyn Fn(&Path) -> bool) -> std::io::Result<String> {
    use std::io::Read;
    let f = std::fs::File::open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if !ok(&opened_path(&f, path)) {
        return Err(std::io::Error::other("it is outside the places rules may come from, or holds secrets"));
    }
    let mut buf = Vec::new();
    f.take((MAX_RULES_BYTES * 2) as u64).read_to_end(&mut buf)?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// The real path of the open file `f` (opened as `path`).
fn opened_path(f: &std::fs::File, path: &Path) -> PathBuf {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        if let Ok(real) = std::fs::read_link(format!("/proc/self/fd/{}", f.as_raw_fd())) {
            return real;
        }
    }
    let _ = f;
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// Following a rules file's `@include` lines (and, in Claude Code's `CLAUDE.md`, its `@path`
/// imports).
struct Includes<'a> {
    /// Includes must stay inside this folder (the rules file's).
    root: PathBuf,
    /// Whether `@path` words are imports (a `CLAUDE.md` and what it imports).
    claude: bool,
    /// The user's secret locations, never included.
    secrets: octo_tools::secrets::Secrets,
    /// Claude Code's imports may also come from the user's home (`@~/.claude/mine.md`).
    user_home: Option<PathBuf>,
    stack: Vec<PathBuf>,
    sources: &'a mut Vec<PathBuf>,
}

impl Includes<'_> {
    fn expand(&mut self, text: &str, dir: &Path) -> String {
        let mut out = String::new();
        for line in text.lines() {
            match line.trim().strip_prefix("@include ").map(str::trim) {
                Some(target) => {
                    out.push_str(&self.include(&format!("@include {target}"), &dir.join(target), dir, false));
                }
                None => {
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
        if self.claude {
            // Claude Code's imports: the named files' text after the importing file's own.
            let user_home = self.user_home.clone();
            for word in crate::claude_imports::mentions(text) {
                if let Some(path) = crate::claude_imports::resolve(&word, dir, user_home.as_deref()) {
                    let body = self.include(&format!("@{word}"), &path, dir, true);
                    out.push_str(&format!(
                        "\n<imported from=\"@{word}\">\n{}\n</imported>\n",
                        body.trim_end()
                    ));
                }
            }
        }
        out
    }

    /// The text of `path` named by `label` (or why it is left out); `home_ok` lets it be in the
    /// user's home as well as inside the root.
    fn include(&mut self, label: &str, path: &Path, dir: &Path, home_ok: bool) -> String {
        let real = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        self.sources.push(path.to_path_buf());
        let allowed = real.starts_with(&self.root)
            || (home_ok && self.user_home.as_ref().is_some_and(|h| real.starts_with(h)));
        if path.exists() && !allowed {
            let place = if home_ok { " and your home" } else { "" };
            format!("[{label} skipped: it is outside {}{place}]\n", self.root.display())
        } else if self.secrets.check(&real).is_some() || self.secrets.check(path).is_some() {
            // A rules file must not pull a secret (`.env`, a key) into what is sent to the model.
            format!("[{label} skipped: it holds secrets]\n")
        } else if self.stack.contains(&real) {
            format!("[{label} skipped: it includes itself]\n")
        } else if self.stack.len() > MAX_INCLUDE_DEPTH {
            format!("[{label} skipped: includes nest deeper than {MAX_INCLUDE_DEPTH}]\n")
        } else {
            let (root, home) = (self.root.clone(), self.user_home.clone().filter(|_| home_ok));
            let secrets = self.secrets.clone();
            let ok = move |r: &Path| {
                secrets.check(r).is_none()
                    && (r.starts_with(&root) || home.as_ref().is_some_and(|h| r.starts_with(h)))
            };
            match read_capped(path, &ok) {
                Ok(inner) => {
                    self.stack.push(real);
                    let text = self.expand(&inner, path.parent().unwrap_or(dir));
                    self.stack.pop();
                    text
                }
                Err(e) => format!("[{label} skipped: {e}]\n"),
            }
        }
    }
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
mod tests;
