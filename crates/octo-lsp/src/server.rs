//! One running language server: its process (in the sandbox, in a process group of its own),
//! the `initialize` handshake, the documents it has open, and the diagnostics it publishes.

use crate::config::{language_id, ServerConfig};
use crate::error::LspError;
use crate::rpc::Connection;
use lsp_types::Diagnostic;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::sync::Notify;

/// The last lines of a server's stderr kept for the message when it fails.
const STDERR_TAIL: usize = 2_000;

/// What a server published for one document.
#[derive(Debug, Clone, Default)]
pub(crate) struct Published {
    /// Counts publications, so a caller can wait for one newer than it saw.
    pub seq: u64,
    /// The document version they are for, when the server says.
    pub version: Option<i64>,
    pub items: Vec<Diagnostic>,
}

/// Diagnostics by document URI, and a signal when any arrive.
#[derive(Default)]
pub(crate) struct Diagnostics {
    by_uri: Mutex<HashMap<String, Published>>,
    seq: Mutex<u64>,
    pub changed: Notify,
}

impl Diagnostics {
    fn publish(&self, params: &Value) {
        let Some(uri) = params.get("uri").and_then(Value::as_str) else {
            return;
        };
        let items: Vec<Diagnostic> = params
            .get("diagnostics")
            .and_then(|d| serde_json::from_value(d.clone()).ok())
            .unwrap_or_default();
        let seq = {
            let mut s = self.seq.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            *s += 1;
            *s
        };
        self.by_uri.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(
            uri.to_owned(),
            Published { seq, version: params.get("version").and_then(Value::as_i64), items },
        );
        self.changed.notify_waiters();
    }

    /// What was last published for `uri`.
    pub(crate) fn get(&self, uri: &str) -> Option<Published> {
        self.by_uri.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(uri).cloned()
    }

    /// The newest publication's number so far.
    pub(crate) fn seq(&self) -> u64 {
        *self.seq.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Every document with diagnostics.
    pub(crate) fn all(&self) -> Vec<(String, Vec<Diagnostic>)> {
        let map = self.by_uri.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        map.iter().filter(|(_, p)| !p.items.is_empty()).map(|(u, p)| (u.clone(), p.items.clone())).collect()
    }
}

/// How a server is started.
pub(crate) struct Launch<'a> {
    pub config: &'a ServerConfig,
    pub program: &'a Path,
    pub root: &'a Path,
    pub sandbox: Option<&'a octo_exec::sandbox::Sandbox>,
    pub env: &'a octo_exec::env::ShellEnv,
    pub init_timeout: Duration,
}

/// A running server.
pub(crate) struct Server {
    pub root: PathBuf,
    conn: Arc<Connection>,
    child: Mutex<Option<tokio::process::Child>>,
    group: Option<u32>,
    /// Open documents and their versions.
    docs: tokio::sync::Mutex<HashMap<String, i32>>,
    pub diagnostics: Arc<Diagnostics>,
    stderr: Arc<Mutex<String>>,
    /// The position encoding the server chose (`utf-8` or the protocol's default `utf-16`).
    pub utf8: bool,
    pub capabilities: Value,
    /// When it answered `initialize`.
    pub started: std::time::Instant,
    /// Language ids by extension, from its configuration.
    language_ids: std::collections::BTreeMap<String, String>,
}

impl Server {
    /// Starts the server and completes `initialize`.
    pub(crate) async fn start(l: Launch<'_>) -> Result<Self, LspError> {
        let mut line = vec![l.program.to_string_lossy().into_owned()];
        line.extend(l.config.args.iter().cloned());
        let shell = format!("exec {}", shell_words::join(&line));
        let mut cmd = match l.sandbox {
            Some(s) => s.shell_command(&shell).map_err(|e| LspError::Start(e.to_string()))?,
            None => octo_exec::shell_command(&shell),
        };
        l.env.apply(&mut cmd);
        cmd.envs(&l.config.env);
        cmd.current_dir(l.root);
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut cmd = tokio::process::Command::from(cmd);
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child = octo_exec::tied::spawn(cmd)
            .map_err(|e| LspError::Start(format!("{}: {e}", l.program.display())))?;
        let (Some(stdin), Some(stdout), stderr) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(LspError::Start("its stdio could not be piped".into()));
        };
        let tail = Arc::new(Mutex::new(String::new()));
        if let Some(mut err) = stderr {
            let tail = Arc::clone(&tail);
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                while let Ok(n) = err.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    let mut t = tail.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    t.push_str(&String::from_utf8_lossy(&buf[..n]));
                    if t.len() > 2 * STDERR_TAIL {
                        let mut cut = t.len() - STDERR_TAIL;
                        while !t.is_char_boundary(cut) {
                            cut += 1;
                        }
                        t.drain(..cut);
                    }
                }
            });
        }
        let diagnostics = Arc::new(Diagnostics::default());
        let sink = Arc::clone(&diagnostics);
        let conn = Connection::start(
            stdout,
            stdin,
            Box::new(move |method, params| {
                if method == "textDocument/publishDiagnostics" {
                    sink.publish(&params);
                }
            }),
            l.config.settings.clone().unwrap_or(Value::Null),
        );
        let group = child.id();
        let mut server = Self {
            root: l.root.to_path_buf(),
            conn,
            child: Mutex::new(Some(child)),
            group,
            docs: tokio::sync::Mutex::default(),
            diagnostics,
            stderr: tail,
            utf8: false,
            capabilities: Value::Null,
            started: std::time::Instant::now(),
            language_ids: l.config.language_ids.clone(),
        };
        let init = server
            .initialize(
                l.config,
                l.init_timeout,
                l.sandbox.is_some_and(octo_exec::sandbox::Sandbox::is_active),
            )
            .await;
        match init {
            Ok(()) => {
                server.started = std::time::Instant::now();
                Ok(server)
            }
            Err(e) => {
                server.kill();
                let stderr = server.stderr_tail();
                Err(if stderr.is_empty() {
                    e
                } else {
                    LspError::Start(format!("{e}; its stderr ended with: {stderr}"))
                })
            }
        }
    }

    /// `initialize`, then `initialized`. A sandboxed server is given no `processId`: servers
    /// built on `vscode-languageserver` (pyright, basedpyright, typescript-language-server …)
    /// probe that process every few seconds with a signal and exit when the probe fails — and
    /// Landlock's signal scope makes it fail for any process outside the sandbox. The server
    /// still ends with octo: its input closes and its process group is killed.
    async fn initialize(
        &mut self,
        config: &ServerConfig,
        timeout: Duration,
        sandboxed: bool,
    ) -> Result<(), LspError> {
        let process_id = (!sandboxed).then(std::process::id);
        let root = file_uri(&self.root).unwrap_or_default();
        let name = self.root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let params = json!({
            "processId": process_id,
            "clientInfo": {"name": "octo", "version": env!("CARGO_PKG_VERSION")},
            "rootUri": root,
            "rootPath": self.root,
            "workspaceFolders": [{"uri": root, "name": name}],
            "initializationOptions": config.initialization_options,
            "capabilities": {
                "general": {"positionEncodings": ["utf-8", "utf-16"]},
                "textDocument": {
                    "synchronization": {"didSave": true, "dynamicRegistration": false},
                    "publishDiagnostics": {"relatedInformation": false, "versionSupport": true},
                    "definition": {"linkSupport": false},
                    "references": {},
                    "hover": {"contentFormat": ["markdown", "plaintext"]},
                    "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
                    "rename": {"prepareSupport": false}
                },
                "workspace": {"symbol": {}, "configuration": true, "workspaceFolders": true},
                "window": {"workDoneProgress": false}
            }
        });
        let answer = self.conn.request("initialize", params, timeout).await?;
        self.capabilities = answer.get("capabilities").cloned().unwrap_or(Value::Null);
        self.utf8 = self.capabilities.get("positionEncoding").and_then(Value::as_str) == Some("utf-8");
        self.conn.notify("initialized", json!({})).await?;
        if let Some(settings) = &config.settings {
            self.conn.notify("workspace/didChangeConfiguration", json!({"settings": settings})).await?;
        }
        Ok(())
    }

    /// Whether the process is gone (its output ended).
    pub(crate) fn is_dead(&self) -> bool {
        self.conn.is_closed()
    }

    /// How long it ran before it died (`None` while it runs).
    pub(crate) fn ran(&self) -> Option<std::time::Duration> {
        self.conn.ended_at().map(|at| at.saturating_duration_since(self.started))
    }

    /// Why it died, with the end of its stderr.
    pub(crate) fn death(&self) -> String {
        let why = self.conn.ended().unwrap_or_else(|| "it stopped".into());
        let tail = self.stderr_tail();
        if tail.is_empty() {
            why
        } else {
            format!("{why}; its stderr ended with: {tail}")
        }
    }

    fn stderr_tail(&self) -> String {
        let t = self.stderr.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let lines: Vec<&str> = t.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(3)..].join(" | ")
    }

    /// Sends `text` as the content of `path` (opening it the first time); returns its URI and
    /// the version sent.
    pub(crate) async fn sync(&self, path: &Path, text: &str) -> Result<(String, i32), LspError> {
        let uri =
            file_uri(path).ok_or_else(|| LspError::Protocol(format!("no URI for {}", path.display())))?;
        let mut docs = self.docs.lock().await;
        match docs.get_mut(&uri) {
            Some(version) => {
                *version += 1;
                let params = json!({
                    "textDocument": {"uri": uri, "version": *version},
                    "contentChanges": [{"text": text}]
                });
                self.conn.notify("textDocument/didChange", params).await?;
                self.conn.notify("textDocument/didSave", json!({"textDocument": {"uri": uri}})).await?;
                return Ok((uri, *version));
            }
            None => {
                let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
                let params = json!({"textDocument": {
                    "uri": uri, "languageId": self.language_ids.get(&ext).map_or_else(|| language_id(&ext), String::as_str), "version": 1, "text": text
                }});
                self.conn.notify("textDocument/didOpen", params).await?;
                docs.insert(uri.clone(), 1);
            }
        }
        Ok((uri, 1))
    }

    /// A request to the server.
    pub(crate) async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, LspError> {
        self.conn.request(method, params, timeout).await
    }

    /// Asks the server to stop, then kills its process group.
    pub(crate) async fn shutdown(&self) {
        if !self.is_dead() {
            let _ = self.conn.request("shutdown", Value::Null, Duration::from_millis(500)).await;
            let _ = self.conn.notify("exit", Value::Null).await;
        }
        self.kill();
    }

    fn kill(&self) {
        if let Some(group) = self.group {
            octo_exec::kill_group(group, true);
        }
        if let Some(mut child) = self.child.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take() {
            let _ = child.start_kill();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The `file://` URI of `path`.
pub(crate) fn file_uri(path: &Path) -> Option<String> {
    url::Url::from_file_path(path).ok().map(String::from)
}

/// The path of a `file://` URI.
pub(crate) fn uri_path(uri: &str) -> Option<PathBuf> {
    url::Url::parse(uri).ok()?.to_file_path().ok()
}
