//! Aider's polyglot benchmark read as it is: `<language>/exercises/practice/<exercise>/` with
//! `.docs/instructions*.md` and `.meta/config.json` naming the solution, test and example files.
//! The agent gets the exercise without its tests and `.meta/`; the tests are laid back in to
//! verify (with the tests the suite skips turned on, as its own harness does).

use crate::task::{read, Task, TaskError, DEFAULT_VERIFY_LIMIT};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The languages of the suite, with the command that runs an exercise's tests.
pub const LANGUAGES: &[(&str, &str)] = &[
    ("cpp", "cmake -S . -B build -DEXERCISM_RUN_ALL_TESTS=1 >/dev/null && cmake --build build"),
    ("go", "go test ./..."),
    ("java", "./gradlew test --offline"),
    ("javascript", "npm test"),
    ("python", "python3 -m pytest -q"),
    ("rust", "cargo test --offline -q -- --include-ignored"),
];

#[derive(Debug, Deserialize)]
struct Config {
    files: Files,
}

#[derive(Debug, Deserialize)]
struct Files {
    #[serde(default)]
    solution: Vec<String>,
    #[serde(default)]
    test: Vec<String>,
    #[serde(default)]
    example: Vec<String>,
}

/// Whether `dir` is a polyglot exercise.
pub fn is_exercise(dir: &Path) -> bool {
    dir.join(".meta/config.json").is_file()
}

/// The language of an exercise at `<root>/<language>/exercises/practice/<name>`.
fn language_of(id: &str) -> Option<&'static str> {
    let first = id.split('/').next()?;
    LANGUAGES.iter().find(|(l, _)| *l == first).map(|(l, _)| *l)
}

/// A path from the config: relative, inside the exercise.
fn inside(config: &Path, p: &str) -> Result<PathBuf, TaskError> {
    let rel = PathBuf::from(p);
    let bad = rel.is_absolute() || rel.components().any(|c| matches!(c, std::path::Component::ParentDir));
    if bad || p.is_empty() {
        return Err(TaskError::format(config, format!("`{p}` is not a path inside the exercise")));
    }
    Ok(rel)
}

/// Reads the exercise in `dir`, named `id` (`python/exercises/practice/two-fer`).
pub fn load(dir: &Path, id: &str) -> Result<Task, TaskError> {
    let config_path = dir.join(".meta/config.json");
    let config: Config = serde_json::from_str(&read(&config_path)?)
        .map_err(|e| TaskError::format(&config_path, format!("not an exercise config: {e}")))?;
    let language = language_of(id)
        .ok_or_else(|| TaskError::format(&config_path, "not under a language folder of the suite"))?;
    let verify =
        LANGUAGES.iter().find(|(l, _)| *l == language).map(|(_, v)| (*v).to_owned()).unwrap_or_default();
    let f = &config.files;
    if f.solution.is_empty() || f.test.is_empty() {
        return Err(TaskError::format(&config_path, "`files` names no solution or no test file"));
    }
    let solution: Vec<PathBuf> =
        f.solution.iter().map(|p| inside(&config_path, p)).collect::<Result<_, _>>()?;
    let tests: Vec<PathBuf> = f.test.iter().map(|p| inside(&config_path, p)).collect::<Result<_, _>>()?;
    let examples: Vec<PathBuf> =
        f.example.iter().map(|p| inside(&config_path, p)).collect::<Result<_, _>>()?;
    for t in &tests {
        if !dir.join(t).is_file() {
            return Err(TaskError::format(&config_path, format!("the test file {} is missing", t.display())));
        }
    }
    let mut text = String::new();
    for name in ["introduction.md", "instructions.md", "instructions.append.md"] {
        if let Ok(t) = std::fs::read_to_string(dir.join(".docs").join(name)) {
            text.push_str(t.trim());
            text.push_str("\n\n");
        }
    }
    if text.trim().is_empty() {
        return Err(TaskError::format(&dir.join(".docs"), "no instructions (.docs/instructions.md)"));
    }
    let files: Vec<String> = solution.iter().map(|p| p.display().to_string()).collect();
    let prompt = format!(
        "{text}Work in the files {}: implement what the instructions above describe. Keep the names \
         of the functions, classes and types already there (hidden tests call them), use only the \
         language's standard library, and do not install packages.",
        files.join(", ")
    );
    let mut withheld = tests.clone();
    withheld.push(PathBuf::from(".meta"));
    let hidden = tests.iter().map(|t| (dir.join(t), t.clone())).collect();
    let solution = if examples.len() == solution.len() {
        examples.iter().zip(&solution).map(|(e, s)| (dir.join(e), s.clone())).collect()
    } else {
        Vec::new()
    };
    let unskip = match language {
        "javascript" => vec![("xtest(".to_owned(), "test(".to_owned())],
        "java" => vec![("@Disabled(\"Remove to run test\")".to_owned(), String::new())],
        _ => Vec::new(),
    };
    Ok(Task {
        id: id.to_owned(),
        language: language.to_owned(),
        prompt,
        start: dir.to_path_buf(),
        withheld,
        hidden,
        solution,
        verify,
        verify_limit: DEFAULT_VERIFY_LIMIT,
        unskip,
    })
}
