//! The sessions directory: create, resume, list, find, remove, export and branch sessions.

use crate::error::StoreError;
use crate::format::{age, new_id, now, Meta, MetaLine, Record, FORMAT_VERSION};
use crate::load::{parse, Loaded};
use crate::writer::{io, SessionWriter};
use octo_agent::{ContentBlock, Message, Role, ToolResultPart};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// A line of `octo sessions`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Session id.
    pub id: String,
    /// The directory it belongs to.
    pub cwd: PathBuf,
    /// Title (or the start of the first prompt).
    pub title: String,
    /// Creation time (seconds since the epoch).
    pub created: u64,
    /// Last write time (seconds since the epoch).
    pub updated: u64,
    /// Last write time in milliseconds, to order sessions written within one second.
    pub updated_ms: u128,
    /// User prompts (not tool results) in it.
    pub turns: usize,
    /// `endpoint:model` last used.
    pub model: String,
}

impl Summary {
    /// One line for listings.
    pub fn line(&self, now: u64) -> String {
        format!(
            "{}  {:>9}  {:>3} turn{}  {:<28}  {}",
            self.id,
            age(self.updated, now),
            self.turns,
            if self.turns == 1 { " " } else { "s" },
            self.model,
            self.title
        )
    }
}

/// How a query for a session failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Exactly one.
    One(Box<Summary>),
    /// Several match; the query must be more specific.
    Several(Vec<Summary>),
    /// None match.
    None,
}

/// Sessions in one directory (`~/.octo/sessions`).
#[derive(Debug, Clone)]
pub struct SessionStore {
    dir: PathBuf,
}

impl SessionStore {
    /// The store in `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.jsonl"))
    }

    /// Starts a new session file for `cwd` and returns its locked writer.
    pub fn create(
        &self,
        cwd: &Path,
        endpoint: &str,
        model: &str,
        parent: Option<&str>,
    ) -> Result<SessionWriter, StoreError> {
        self.create_with_id(&new_id(), cwd, endpoint, model, parent)
    }

    /// [`SessionStore::create`] under an id chosen by the caller (a front end that named the
    /// session before its first round); an id that is not letters, digits, `-`, `_` or `.` gets a
    /// fresh one instead. Fails if a session of that id exists.
    pub fn create_with_id(
        &self,
        id: &str,
        cwd: &Path,
        endpoint: &str,
        model: &str,
        parent: Option<&str>,
    ) -> Result<SessionWriter, StoreError> {
        crate::private::create_dir(&self.dir).map_err(|e| io(&self.dir, e))?;
        let usable = !id.is_empty()
            && !id.starts_with('.')
            && id.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
        let meta = Meta {
            version: FORMAT_VERSION,
            id: if usable { id.to_owned() } else { new_id() },
            created: now(),
            cwd: cwd.to_path_buf(),
            endpoint: endpoint.to_owned(),
            model: model.to_owned(),
            title: None,
            parent: parent.map(str::to_owned),
        };
        let path = self.path(&meta.id);
        let mut line = serde_json::to_vec(&MetaLine { kind: "meta".into(), meta: meta.clone() })
            .map_err(|e| StoreError::Io { path: path.display().to_string(), reason: e.to_string() })?;
        line.push(b'\n');
        let mut f = crate::private::create_new(&path).map_err(|e| io(&path, e))?;
        f.write_all(&line).and_then(|()| f.sync_all()).map_err(|e| io(&path, e))?;
        drop(f);
        SessionWriter::open(&path, &meta.id)
    }

    /// Loads a session (read-only; works while another process writes it).
    pub fn load(&self, id: &str) -> Result<Loaded, StoreError> {
        let path = self.path(id);
        let bytes = std::fs::read(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => StoreError::NotFound { query: id.to_owned() },
            _ => io(&path, e),
        })?;
        parse(&path, &bytes)
    }

    /// Loads a session to continue it, and returns the locked writer that appends to it (a torn
    /// last record is cut off first).
    pub fn resume(&self, id: &str) -> Result<(Loaded, SessionWriter), StoreError> {
        let path = self.path(id);
        if !path.is_file() {
            return Err(StoreError::NotFound { query: id.to_owned() });
        }
        // Lock first, then read through the locked handle: another process cannot append
        // between the read and the repair of a torn tail.
        let mut writer = SessionWriter::open(&path, id)?;
        let bytes = writer.read_all()?;
        let loaded = parse(&path, &bytes)?;
        writer.repair_tail(&bytes, loaded.valid_len)?;
        Ok((loaded, writer))
    }

    /// Sessions, newest first; only those of `cwd` when given.
    pub fn list(&self, cwd: Option<&Path>) -> Result<Vec<Summary>, StoreError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io(&self.dir, e)),
        };
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
                continue;
            }
            if let Some(s) = summarize(&path) {
                if cwd.is_none_or(|c| s.cwd == c) {
                    out.push(s);
                }
            }
        }
        out.sort_by(|a, b| b.updated_ms.cmp(&a.updated_ms).then_with(|| b.id.cmp(&a.id)));
        Ok(out)
    }

    /// Finds a session of `cwd` (or any directory when `None`) by `last`, a position in the
    /// directory's list (1 is the newest), an id prefix, or a title substring.
    pub fn find(&self, query: &str, cwd: Option<&Path>) -> Result<Found, StoreError> {
        let all = self.list(cwd)?;
        let q = query.trim();
        if q.is_empty() || q == "last" {
            return Ok(all.into_iter().next().map_or(Found::None, |s| Found::One(Box::new(s))));
        }
        if let Some(exact) = all.iter().find(|s| s.id == q) {
            return Ok(Found::One(Box::new(exact.clone())));
        }
        // A short number is a position in the directory's list, newest first (`octo -r 2`); ids
        // start with an eight-digit date, so they never look like one.
        if let (Some(_), true, Ok(n)) = (cwd, q.len() <= 3, q.parse::<usize>()) {
            if let Some(s) = n.checked_sub(1).and_then(|i| all.get(i)) {
                return Ok(Found::One(Box::new(s.clone())));
            }
        }
        let lower = q.to_lowercase();
        let mut hits: Vec<Summary> = all
            .into_iter()
            .filter(|s| s.id.starts_with(q) || s.title.to_lowercase().contains(&lower))
            .collect();
        Ok(match hits.len() {
            0 => Found::None,
            1 => Found::One(Box::new(hits.remove(0))),
            _ => Found::Several(hits),
        })
    }

    /// Deletes a session file; refuses (`InUse`) while another process is writing it, whose
    /// further records would otherwise go into a deleted file.
    pub fn remove(&self, id: &str) -> Result<(), StoreError> {
        let path = self.path(id);
        if !path.is_file() {
            return Err(StoreError::NotFound { query: id.to_owned() });
        }
        let writer = SessionWriter::open(&path, id)?;
        std::fs::remove_file(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => StoreError::NotFound { query: id.to_owned() },
            _ => io(&path, e),
        })?;
        drop(writer);
        Ok(())
    }

    /// Gives a saved session a new title; refuses (`InUse`) while another process writes it.
    pub fn rename(&self, id: &str, title: &str) -> Result<(), StoreError> {
        let path = self.path(id);
        if !path.is_file() {
            return Err(StoreError::NotFound { query: id.to_owned() });
        }
        let mut w = SessionWriter::open(&path, id)?;
        w.record(&Record::Title { title: title.trim().chars().take(200).collect() })
    }

    /// The ids of session files a listing leaves out because they cannot be read (no valid
    /// first line), so a front end can name them.
    pub fn unreadable(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return Vec::new() };
        let mut out: Vec<String> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("jsonl") && summarize(p).is_none())
            .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .collect();
        out.sort();
        out
    }

    /// A new session holding the first `at` messages of `id`, recording `id` as its parent. The
    /// original is not touched.
    pub fn fork(&self, id: &str, at: usize) -> Result<String, StoreError> {
        let src = self.load(id)?;
        let at = at.min(src.messages.len());
        let mut w = self.create(&src.meta.cwd, &src.model.0, &src.model.1, Some(id))?;
        w.append(&src.messages[..at])?;
        if let Some(t) = &src.title {
            w.record(&Record::Title { title: format!("{t} (branch)") })?;
        }
        Ok(w.id().to_owned())
    }

    /// The session as a Markdown transcript.
    pub fn export_markdown(&self, id: &str) -> Result<String, StoreError> {
        let s = self.load(id)?;
        Ok(transcript(&s))
    }
}

/// Reads just enough of a file for a listing: the meta line, titles, and a count of prompts.
fn summarize(path: &Path) -> Option<Summary> {
    let f = std::fs::File::open(path).ok()?;
    let modified = f.metadata().ok()?.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
    let (updated, updated_ms) = (modified.as_secs(), modified.as_millis());
    let mut lines = std::io::BufReader::new(f).lines();
    let meta: MetaLine = serde_json::from_str(&lines.next()?.ok()?).ok()?;
    let meta = meta.meta;
    let (mut title, mut turns, mut model) =
        (meta.title.clone(), 0, format!("{}:{}", meta.endpoint, meta.model));
    let mut first_prompt = None;
    for line in lines.map_while(Result::ok) {
        // Cheap checks first: most lines are messages that need no full parse.
        if line.starts_with("{\"type\":\"reset\"") {
            continue; // a compaction: prompts before it were already counted
        } else if line.starts_with("{\"type\":\"pending\"") || line.starts_with("{\"type\":\"rolled_back\"") {
            continue; // a prompt counts once its round is committed
        } else if line.contains("\"type\":\"title\"") || line.contains("\"type\":\"model\"") {
            match serde_json::from_str::<Record>(&line) {
                Ok(Record::Title { title: t }) => title = Some(t),
                Ok(Record::Model { endpoint, model: m }) => model = format!("{endpoint}:{m}"),
                _ => {}
            }
        } else if line.contains("\"role\":\"user\"") && !line.contains("\"tool_result\"") {
            turns += 1;
            if first_prompt.is_none() {
                if let Ok(Record::Message { message, .. }) = serde_json::from_str::<Record>(&line) {
                    first_prompt = Some(message.text());
                }
            }
        }
    }
    let title =
        title.or_else(|| first_prompt.map(|p| title_from_prompt(&p))).unwrap_or_else(|| "(empty)".into());
    Some(Summary {
        id: meta.id,
        cwd: meta.cwd,
        title,
        created: meta.created,
        updated,
        updated_ms,
        turns,
        model,
    })
}

/// A title from the first line of a prompt, at most 60 characters.
pub fn title_from_prompt(prompt: &str) -> String {
    let first = prompt.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    let mut t: String = first.chars().take(60).collect();
    if t.len() < first.len() {
        t.push('…');
    }
    t
}

fn transcript(s: &Loaded) -> String {
    let mut out = format!("# {}\n\n", s.title.clone().unwrap_or_else(|| format!("Session {}", s.meta.id)));
    out.push_str(&format!(
        "- id: `{}`\n- directory: `{}`\n- model: `{}:{}`\n",
        s.meta.id,
        s.meta.cwd.display(),
        s.model.0,
        s.model.1
    ));
    if let Some(p) = &s.meta.parent {
        out.push_str(&format!("- branched from: `{p}`\n"));
    }
    for m in &s.messages {
        for block in &m.content {
            match (m.role, block) {
                (Role::User, ContentBlock::Text { text }) => out.push_str(&format!("\n## User\n\n{text}\n")),
                (Role::Assistant, ContentBlock::Text { text }) => {
                    out.push_str(&format!("\n## Assistant\n\n{text}\n"));
                }
                (
                    _,
                    ContentBlock::Thinking { thinking, .. }
                    | ContentBlock::Reasoning { summary: thinking, .. },
                ) if !thinking.is_empty() => {
                    out.push_str(&format!(
                        "\n<details><summary>Thinking</summary>\n\n{thinking}\n\n</details>\n"
                    ));
                }
                (_, ContentBlock::ToolUse { name, input, .. }) => {
                    out.push_str(&format!("\n**Tool call** `{name}`\n\n```json\n{input}\n```\n"));
                }
                (_, ContentBlock::ToolResult { content, is_error, .. }) => {
                    let text: Vec<&str> = content.iter().filter_map(ToolResultPart::as_text).collect();
                    let label = if *is_error { "Tool error" } else { "Tool result" };
                    out.push_str(&format!("\n**{label}**\n\n```\n{}\n```\n", text.join("\n")));
                }
                (_, ContentBlock::Image { source }) => {
                    out.push_str(&format!("\n*[image: {}]*\n", source.media_type));
                }
                (
                    _,
                    ContentBlock::RedactedThinking { .. }
                    | ContentBlock::Thinking { .. }
                    | ContentBlock::Reasoning { .. },
                ) => {}
            }
        }
    }
    out
}

/// Messages as a plain list for `/history`-style views.
pub fn first_lines(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| m.role == Role::User && !m.text().is_empty())
        .map(|m| title_from_prompt(&m.text()))
        .collect()
}
