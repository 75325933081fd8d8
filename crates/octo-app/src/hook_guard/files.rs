//! The files in the workspace a hook's command runs: the scripts it names, the build and
//! configuration files the tools it calls read (present or not: one made later counts), the
//! modules an interpreter finds first in the working folder, and what those files name in turn,
//! followed a few levels. Generous on purpose: a file listed that does not run costs a question
//! at most once per change; a file missed runs planted code.

use std::path::{Path, PathBuf};

/// The most read of a file to look for what it names (and to compare it).
pub(super) const MAX_FILE: u64 = 256 * 1024;
/// How many files one hook's command is followed to.
const MAX_FILES: usize = 256;
/// How deep names are followed (the command's files are level 0).
const MAX_DEPTH: usize = 4;

/// Script endings: a file named with one of these is run by something.
const SCRIPT_ENDINGS: &[&str] = &[
    "sh", "bash", "zsh", "fish", "py", "pyc", "js", "mjs", "cjs", "ts", "mts", "cts", "rb", "pl", "pm", "mk",
    "make", "ps1", "php", "lua", "tcl", "awk", "sed", "just", "rake", "gradle", "kts",
];

/// Configuration files that hold code (or name a program) for the JavaScript tools.
const JS_FILES: &[&str] = &[
    "package.json",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pnpmfile.cjs",
    "bunfig.toml",
    "eslint.config.js",
    "eslint.config.mjs",
    "eslint.config.cjs",
    "eslint.config.ts",
    ".eslintrc.js",
    ".eslintrc.cjs",
    "prettier.config.js",
    "prettier.config.mjs",
    "prettier.config.cjs",
    ".prettierrc.js",
    ".prettierrc.cjs",
    ".prettierrc.mjs",
    "jest.config.js",
    "jest.config.ts",
    "jest.config.mjs",
    "jest.config.cjs",
    "vitest.config.js",
    "vitest.config.ts",
    "vitest.config.mjs",
    "vite.config.js",
    "vite.config.ts",
    "vite.config.mjs",
    "babel.config.js",
    "babel.config.cjs",
    ".babelrc.js",
    "webpack.config.js",
    "rollup.config.js",
    "rollup.config.mjs",
    "stylelint.config.js",
    ".stylelintrc.js",
    "commitlint.config.js",
    "lint-staged.config.js",
    ".lintstagedrc.js",
];

/// Configuration files the Python tools read code or plugins from.
const PYTHON_FILES: &[&str] = &[
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "tox.ini",
    "noxfile.py",
    "conftest.py",
    ".pylintrc",
    "pylintrc",
    "mypy.ini",
    ".flake8",
    "pytest.ini",
    ".pre-commit-config.yaml",
];

/// What cargo and rustup read that can name a program to run.
const RUST_FILES: &[&str] =
    &[".cargo/config.toml", ".cargo/config", "rust-toolchain", "rust-toolchain.toml", "build.rs"];

/// Programs that are Python (they run the working folder's modules and read its config).
fn python_tool(tool: &str) -> bool {
    tool.starts_with("python")
        || matches!(
            tool,
            "pytest"
                | "py.test"
                | "black"
                | "ruff"
                | "mypy"
                | "pylint"
                | "flake8"
                | "isort"
                | "tox"
                | "nox"
                | "uv"
                | "poetry"
                | "pip"
                | "pip3"
                | "pdm"
                | "hatch"
                | "pre-commit"
                | "pyright"
        )
}

/// The build and configuration files `tool` reads, relative to its working folder (`rest`: the
/// words after it in its command).
fn build_files(tool: &str, rest: &[String]) -> Vec<String> {
    let own = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let mut out = match tool {
        // `$(MAKE)` in a recipe reads as `$`, `MAKE`.
        "make" | "gmake" | "MAKE" => make_files(rest),
        "npm" | "npx" | "yarn" | "pnpm" | "pnpx" | "bun" | "bunx" | "node" | "deno" | "eslint"
        | "prettier" | "jest" | "vitest" | "tsc" | "tsx" | "ts-node" | "stylelint" | "lint-staged" => {
            own(JS_FILES)
        }
        "cargo" | "rustfmt" | "rustc" | "cargo-fmt" | "cargo-clippy" => own(RUST_FILES),
        "just" => own(&["justfile", "Justfile", ".justfile"]),
        "task" => own(&["Taskfile.yml", "Taskfile.yaml"]),
        "rake" => own(&["Rakefile", "rakefile", "Rakefile.rb"]),
        "gradle" | "gradlew" => own(&[
            "build.gradle",
            "build.gradle.kts",
            "settings.gradle",
            "settings.gradle.kts",
            "gradle/wrapper/gradle-wrapper.properties",
            "gradle/wrapper/gradle-wrapper.jar",
        ]),
        "mvn" | "mvnw" => own(&["pom.xml", ".mvn/wrapper/maven-wrapper.properties", ".mvn/jvm.config"]),
        "go" => own(&["go.mod", "go.work"]),
        "bundle" | "rspec" | "rubocop" => own(&["Gemfile", ".rubocop.yml", ".rspec"]),
        t if python_tool(t) => own(PYTHON_FILES),
        _ => Vec::new(),
    };
    let next = |flag: &str| rest.iter().position(|w| w == flag).and_then(|i| rest.get(i + 1));
    if let ("npx" | "pnpx" | "bunx", Some(bin)) = (tool, rest.iter().find(|w| !w.starts_with('-'))) {
        out.push(format!("node_modules/.bin/{bin}"));
    }
    // `python -m module` imports the module from the working folder first.
    if let (true, Some(module)) = (python_tool(tool), next("-m")) {
        let base = module.replace('.', "/");
        out.extend([format!("{base}.py"), format!("{base}/__main__.py"), format!("{base}/__init__.py")]);
    }
    out
}

/// `make`'s files: `-f`/`--file` names them, else the three default names, in the folder of
/// `-C`/`--directory` if given.
fn make_files(rest: &[String]) -> Vec<String> {
    let mut dir = String::new();
    let mut named = Vec::new();
    let mut words = rest.iter();
    while let Some(w) = words.next() {
        let value = |prefix: &str| w.strip_prefix(prefix).filter(|v| !v.is_empty()).map(str::to_owned);
        if w == "-C" || w == "--directory" {
            dir = words.next().cloned().unwrap_or_default();
        } else if let Some(d) = value("--directory=").or_else(|| value("-C")) {
            dir = d;
        } else if w == "-f" || w == "--file" || w == "--makefile" {
            named.extend(words.next().cloned());
        } else if let Some(f) = value("--file=").or_else(|| value("--makefile=")).or_else(|| value("-f")) {
            named.push(f);
        }
    }
    let join = |name: &str| if dir.is_empty() { name.to_owned() } else { format!("{dir}/{name}") };
    if named.is_empty() {
        ["GNUmakefile", "makefile", "Makefile"].iter().map(|n| join(n)).collect()
    } else {
        named.iter().map(|n| join(n)).collect()
    }
}

/// What a hook's command runs, as far as it was followed.
#[derive(Debug, Default)]
pub(crate) struct Run {
    /// The files, in the workspace (some perhaps missing: made later, they count).
    pub files: Vec<PathBuf>,
    /// More were named than are followed ([`MAX_FILES`]): what was not followed cannot be
    /// vouched for, so the hook asks.
    pub overflow: bool,
}

/// What is collected.
struct Crawl<'a> {
    workspace: &'a Path,
    found: Vec<PathBuf>,
    queue: Vec<(PathBuf, usize)>,
    /// How many of the found are there.
    read: usize,
    overflow: bool,
}

impl Crawl<'_> {
    /// Adds `path` (lexically inside the workspace), to be read at `depth` when it exists.
    fn add(&mut self, path: PathBuf, depth: usize) {
        let path = normalize(&path);
        if !path.starts_with(self.workspace) || self.found.contains(&path) {
            return;
        }
        // Only files that are there count against the budget (a missing build file is one
        // look), so links to nowhere cannot use it up.
        let there = path.symlink_metadata().is_ok();
        if there && self.read >= MAX_FILES {
            self.overflow = true;
            return;
        }
        self.read += usize::from(there);
        self.found.push(path.clone());
        if there {
            self.queue.push((path, depth));
        }
    }

    /// The tools a list of words calls: their build files, relative to `cwd`.
    fn tools(&mut self, words: &[String], cwd: &Path, depth: usize) {
        for (i, word) in words.iter().enumerate() {
            let tool = word.rsplit('/').next().unwrap_or(word);
            let rest = words.get(i + 1..).unwrap_or_default();
            for build in build_files(tool, rest) {
                self.add(cwd.join(build), depth);
            }
            if python_tool(tool) {
                for module in python_modules(cwd) {
                    self.add(module, depth);
                }
            }
        }
    }
}

/// The files in `workspace` that `command` runs (see the module's doc).
pub(crate) fn files_run(command: &str, workspace: &Path) -> Run {
    let mut crawl = Crawl { workspace, found: Vec::new(), queue: Vec::new(), read: 0, overflow: false };
    let mut cwd = workspace.to_path_buf();
    for segment in segments(&expand(command, workspace)) {
        let said = words(segment);
        // `cd tools && sh fmt.sh`: later parts run there.
        if said.first().is_some_and(|w| w == "cd") {
            if let Some(dir) = said.get(1) {
                cwd = normalize(&cwd.join(dir));
            }
            continue;
        }
        crawl.tools(&said, &cwd, 0);
        for (i, word) in said.iter().enumerate() {
            let before = if i > 0 { said[i - 1].as_str() } else { "" };
            for path in named(word, before, &[cwd.clone(), workspace.to_path_buf()], workspace, false) {
                crawl.add(path, 0);
            }
        }
    }
    while let Some((file, depth)) = crawl.queue.pop() {
        if depth >= MAX_DEPTH {
            continue;
        }
        let Some(text) = head(&file) else { continue };
        // Names resolve where the file really is (a `node_modules/.bin` link's target) and in
        // the working folder (where `make` and `source` resolve them).
        let real_dir = std::fs::canonicalize(&file).ok().and_then(|r| r.parent().map(Path::to_path_buf));
        let dirs: Vec<PathBuf> = real_dir.into_iter().chain([workspace.to_path_buf()]).collect();
        let package = file.file_name().is_some_and(|n| n == "package.json");
        if file.extension().is_some_and(|e| e == "py") {
            for module in dirs.first().map(|d| python_modules(d)).unwrap_or_default() {
                crawl.add(module, depth + 1);
            }
            // Python runs a module's cached bytecode in place of its source when it may.
            if let (Some(dir), Some(stem)) = (file.parent(), file.file_stem()) {
                let pattern = dir.join("__pycache__").join(format!("{}.*.pyc", stem.to_string_lossy()));
                for cached in glob(&pattern) {
                    crawl.add(cached, depth + 1);
                }
            }
        }
        for line in expand(&text, workspace).lines() {
            let list = words(line);
            let first = list.first().map(String::as_str).unwrap_or("");
            crawl.tools(&list, workspace, depth + 1);
            for (i, word) in list.iter().enumerate() {
                // Every operand of `include` and `import`, not just the first.
                let before = match first {
                    "include" | "-include" | "sinclude" | "import" if i > 0 => first,
                    _ if i > 0 => list[i - 1].as_str(),
                    _ => "",
                };
                for path in named(word, before, &dirs, workspace, package) {
                    crawl.add(path, depth + 1);
                }
                if first == "from" && i == 3 && list.get(2).is_some_and(|w| w == "import") {
                    let package = list[1].replace('.', "/");
                    for path in modules(&format!("{package}/{word}"), &dirs, workspace) {
                        crawl.add(path, depth + 1);
                    }
                }
            }
        }
    }
    Run { files: crawl.found, overflow: crawl.overflow }
}

/// The parts of a command that run one after another or side by side.
fn segments(command: &str) -> impl Iterator<Item = &str> {
    command.split([';', '&', '|', '\n']).map(str::trim).filter(|s| !s.is_empty())
}

/// The project variables put in; quotes taken off (they join what they touch: `"$DIR"/x.sh`).
fn expand(text: &str, workspace: &Path) -> String {
    let ws = workspace.display().to_string();
    text.replace("${CLAUDE_PROJECT_DIR}", &ws)
        .replace("$CLAUDE_PROJECT_DIR", &ws)
        .replace("${OCTO_PROJECT_DIR}", &ws)
        .replace("$OCTO_PROJECT_DIR", &ws)
        .replace(['"', '\''], "")
}

/// The words of a line, shell and make punctuation taken off.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || "`;|&()<>{}=,:[]".contains(c))
        .map(|w| w.trim_start_matches('@').to_owned())
        .filter(|w| !w.is_empty())
        .collect()
}

/// The files a word names (`before`: the word ahead of it), resolved against each of `dirs`:
/// a script (by its ending, its mode or a `#!` line); any file after `include`, `source`, `.`,
/// `-f`; a Python module after `import`/`from`; a Node module by its relative name; in a
/// `package.json`, a tool in `node_modules/.bin`. A word that starts with a variable
/// (`$(dirname $0)/x.sh`, `$PWD/x.sh`) is tried by what follows it; one with a `*` is expanded
/// in its folder.
fn named(word: &str, before: &str, dirs: &[PathBuf], workspace: &Path, package: bool) -> Vec<PathBuf> {
    let word = match word.strip_prefix('$') {
        Some(rest) => rest.split_once('/').map_or("", |(_, tail)| tail),
        None => word,
    };
    let word = if Path::new(word).is_absolute() && !word.starts_with(&*workspace.to_string_lossy()) {
        word.trim_start_matches('/')
    } else {
        word
    };
    if word.is_empty() || word.starts_with('-') || word.len() > 4096 {
        return Vec::new();
    }
    let interpreter = before.rsplit('/').next().unwrap_or(before);
    let any = matches!(before, "include" | "-include" | "sinclude" | "source" | "." | "-f" | "--file")
        || matches!(
            interpreter,
            "sh" | "bash" | "zsh" | "dash" | "ksh" | "fish" | "node" | "ruby" | "perl" | "php" | "lua"
        )
        || interpreter.starts_with("python");
    let mut out = Vec::new();
    for dir in dirs {
        for candidate in glob(&dir.join(word)) {
            if let Some(p) = in_workspace(&candidate, workspace).filter(|p| any || runs(p)) {
                out.push(p);
            }
        }
        if matches!(before, "import" | "from") && !word.starts_with('.') {
            out.extend(modules(&word.replace('.', "/"), std::slice::from_ref(dir), workspace));
        }
        if (word.starts_with("./") || word.starts_with("../")) && Path::new(word).extension().is_none() {
            for ending in [".js", ".mjs", ".cjs", ".ts", "/index.js"] {
                out.extend(in_workspace(&dir.join(format!("{word}{ending}")), workspace));
            }
        }
    }
    if package && !word.contains('/') {
        out.extend(in_workspace(&workspace.join("node_modules/.bin").join(word), workspace));
    }
    out
}

/// A Python module's files under each of `dirs` (`a/b` → `a/b.py`, `a/b/__init__.py`).
fn modules(base: &str, dirs: &[PathBuf], workspace: &Path) -> Vec<PathBuf> {
    dirs.iter()
        .flat_map(|d| [d.join(format!("{base}.py")), d.join(base).join("__init__.py")])
        .filter_map(|p| in_workspace(&p, workspace))
        .collect()
}

/// The modules Python finds first in `dir` (its `sys.path[0]`): every `*.py`, `*.pyc`, `*.so`
/// and package's `__init__.py` at its top level.
fn python_modules(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut out = Vec::new();
    for entry in entries.flatten().take(2000) {
        let path = entry.path();
        let ending = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if matches!(ending, "py" | "pyc" | "so") {
            out.push(path);
        } else if entry.file_type().is_ok_and(|t| t.is_dir()) && path.join("__init__.py").is_file() {
            out.push(path.join("__init__.py"));
        } else if entry.file_name() == "__pycache__" {
            out.extend(glob(&path.join("*.pyc")));
        }
    }
    out.sort();
    out
}

/// `pattern` with one `*` in its last name expanded in its folder (without one: itself).
fn glob(pattern: &Path) -> Vec<PathBuf> {
    let name = pattern.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let Some((prefix, suffix)) = name.split_once('*') else { return vec![pattern.to_path_buf()] };
    let Some(dir) = pattern.parent().filter(|d| !d.to_string_lossy().contains('*')) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    // Every match, sorted: a cut here would choose by directory order, which a command sets.
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.len() >= prefix.len() + suffix.len() && n.starts_with(prefix) && n.ends_with(suffix))
        .map(|n| dir.join(n))
        .collect();
    out.sort();
    out
}

/// Whether a file runs as a program or script: a script's ending, an executable mode, or `#!`.
fn runs(path: &Path) -> bool {
    let ending = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if SCRIPT_ENDINGS.contains(&ending) {
        return true;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0) {
            return true;
        }
    }
    let mut start = [0u8; 2];
    std::fs::File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut start)).is_ok()
        && &start == b"#!"
}

/// `path` as a regular file whose real place is in the workspace, by the name as written (what
/// the user knows it by).
fn in_workspace(path: &Path, workspace: &Path) -> Option<PathBuf> {
    let meta = std::fs::metadata(path).ok()?;
    let real = std::fs::canonicalize(path).ok()?;
    (meta.is_file() && real.starts_with(workspace)).then(|| normalize(path))
}

/// The first [`MAX_FILE`] bytes of a file, as text.
fn head(file: &Path) -> Option<String> {
    use std::io::Read;
    let f = std::fs::File::open(file).ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    f.take(MAX_FILE).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
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
