//! One scenario builder for octo's tests, as codex's `test_codex()`: the user's config, the
//! workspace's files (and files in octo's home), the model's scripted replies and the
//! permission mode become a temp home, a workspace and a mock model in one call.
//!
//! The kit builds only on the core (every crate dev-depends on it), so the session itself is
//! started by the crate under test from what [`Built`] holds — in `octo-app`'s tests that is one
//! helper (`suite::common::started`).
//!
//! ```no_run
//! # async fn example() {
//! use octo_testkit::{anthropic::Reply, scenario::Scenario, Scripted};
//! let built = Scenario::new()
//!     .config("[permissions]\nallow = [\"terminal(ls*)\"]")
//!     .file("notes.txt", "remember the milk")
//!     .reply(Scripted::sse(Reply::new().text("Done.").sse()))
//!     .mode("auto")
//!     .build()
//!     .await;
//! assert!(built.workspace().join("notes.txt").exists());
//! # }
//! ```

use crate::{MockLlm, Scripted, TempHome};
use std::path::{Path, PathBuf};

/// What a test needs before its session starts.
#[derive(Default)]
pub struct Scenario {
    config: Vec<String>,
    files: Vec<(PathBuf, Vec<u8>)>,
    home_files: Vec<(PathBuf, Vec<u8>)>,
    replies: Vec<Scripted>,
    mode: Option<String>,
    under: Option<PathBuf>,
}

impl Scenario {
    /// An empty scenario: a config whose default model is the mock's, nothing else.
    pub fn new() -> Self {
        Self::default()
    }

    /// More of the user's `config.toml` (top-level keys or whole tables), before the mock's
    /// endpoint table; `{mock}` stands for the mock model's base URL.
    #[must_use]
    pub fn config(mut self, toml: impl Into<String>) -> Self {
        self.config.push(toml.into());
        self
    }

    /// A file in the workspace (parent folders made).
    #[must_use]
    pub fn file(mut self, relative: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> Self {
        self.files.push((relative.as_ref().to_path_buf(), contents.as_ref().to_vec()));
        self
    }

    /// A file in octo's home (the user's own skills, agents, hooks …).
    #[must_use]
    pub fn home_file(mut self, relative: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> Self {
        self.home_files.push((relative.as_ref().to_path_buf(), contents.as_ref().to_vec()));
        self
    }

    /// One more scripted reply of the model (Anthropic protocol), in order.
    #[must_use]
    pub fn reply(mut self, reply: Scripted) -> Self {
        self.replies.push(reply);
        self
    }

    /// Scripted replies of the model, in order.
    #[must_use]
    pub fn replies(mut self, replies: impl IntoIterator<Item = Scripted>) -> Self {
        self.replies.extend(replies);
        self
    }

    /// The permission mode the session starts in (`default`, `accept-edits`, `plan`, `auto`).
    #[must_use]
    pub fn mode(mut self, mode: impl Into<String>) -> Self {
        self.mode = Some(mode.into());
        self
    }

    /// Makes the temporary home and workspace under `dir` instead of the system's temp folder
    /// (the sandbox's tests keep them out of `/tmp`).
    #[must_use]
    pub fn under(mut self, dir: impl Into<PathBuf>) -> Self {
        self.under = Some(dir.into());
        self
    }

    /// Starts the mock model with the replies and writes the home and the workspace.
    ///
    /// # Panics
    /// When the temporary folders cannot be written (a test cannot go on without them).
    pub async fn build(self) -> Built {
        let home = match &self.under {
            Some(dir) => TempHome::new_in(dir),
            None => TempHome::new(),
        }
        .unwrap_or_else(|e| panic!("temporary home: {e}"));
        let llm = MockLlm::start().await;
        llm.script_anthropic(self.replies).await;
        let config = format!(
            "default = \"mock:claude-sonnet-4-5\"\n{}\n[endpoints.mock]\nprotocol = \"anthropic\"\nbase_url = \"{}\"\napi_key_env = \"MOCK_KEY\"\n",
            self.config.join("\n").replace("{mock}", &llm.uri()),
            llm.uri()
        );
        let write = |path: PathBuf, contents: &[u8]| {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{}: {e}", parent.display()));
            }
            std::fs::write(&path, contents).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        };
        write(home.home().join("config.toml"), config.as_bytes());
        for (p, c) in &self.files {
            write(home.workspace().join(p), c);
        }
        for (p, c) in &self.home_files {
            write(home.home().join(p), c);
        }
        Built { home, llm, mode: self.mode }
    }
}

/// A scenario made: its home and workspace on disk and its mock model running.
pub struct Built {
    /// The temporary home and workspace (removed when this is dropped).
    pub home: TempHome,
    /// The mock model.
    pub llm: MockLlm,
    /// The permission mode asked for, as written.
    pub mode: Option<String>,
}

impl Built {
    /// octo's home (`OCTO_HOME`).
    pub fn home_dir(&self) -> PathBuf {
        self.home.home()
    }

    /// The workspace.
    pub fn workspace(&self) -> PathBuf {
        self.home.workspace()
    }

    /// The environment a session of this scenario sees: the mock's key, nothing else.
    pub fn env(key: &str) -> Option<String> {
        (key == "MOCK_KEY").then(|| "sk-mock".to_owned())
    }
}
