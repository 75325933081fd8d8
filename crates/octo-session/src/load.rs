//! Reading a session file, repairing what a crash can leave behind.

use crate::error::StoreError;
use crate::format::{Meta, MetaLine, Record, FORMAT_VERSION};
use octo_agent::Message;
use std::path::Path;

/// A session read from disk.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// Its meta record.
    pub meta: Meta,
    /// The messages, in order.
    pub messages: Vec<Message>,
    /// The latest title.
    pub title: Option<String>,
    /// Endpoint and model last used.
    pub model: (String, String),
    /// What was repaired or skipped while loading, for the user.
    pub warnings: Vec<String>,
    /// Byte length of the valid part of the file (a torn last line is beyond it).
    pub valid_len: u64,
    /// The last message the user sent whose turn never completed a round (octo was killed, or
    /// the turn failed or was cancelled): not in `messages`, kept so it can be sent again.
    pub unanswered: Option<Message>,
    /// What the session had spent when it was last saved: tokens, and their cost in USD when
    /// known.
    pub spent: (octo_agent::Usage, Option<f64>),
}

/// Parses a whole session file's bytes.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Loaded, StoreError> {
    let shown = path.display().to_string();
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(StoreError::Corrupt { path: shown, reason: "the file is empty (no meta record)".into() });
    }
    let mut lines = split_lines(bytes);
    let (first, first_end, _) = lines
        .next()
        .ok_or_else(|| StoreError::Corrupt { path: shown.clone(), reason: "no meta record".into() })?;
    let meta_line: MetaLine = serde_json::from_slice(first).map_err(|e| StoreError::Corrupt {
        path: shown.clone(),
        reason: format!("the first line is not a session meta record ({e})"),
    })?;
    if meta_line.kind != "meta" {
        return Err(StoreError::Corrupt {
            path: shown,
            reason: "the first line is not a session meta record".into(),
        });
    }
    let meta = meta_line.meta;
    if meta.version > FORMAT_VERSION {
        return Err(StoreError::FutureVersion {
            path: shown,
            found: meta.version,
            supported: FORMAT_VERSION,
        });
    }
    let mut loaded = Loaded {
        model: (meta.endpoint.clone(), meta.model.clone()),
        title: meta.title.clone(),
        meta,
        messages: Vec::new(),
        warnings: Vec::new(),
        valid_len: first_end as u64,
        unanswered: None,
        spent: Default::default(),
    };
    let mut lineno = 1;
    for (line, end, terminated) in lines {
        lineno += 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            loaded.valid_len = end as u64;
            continue;
        }
        match serde_json::from_slice::<Record>(line) {
            Ok(Record::Message { message, .. }) => {
                // A committed round: the pending message (its first message) was answered.
                loaded.unanswered = None;
                loaded.messages.push(message);
            }
            Ok(Record::Pending { message, .. }) => loaded.unanswered = Some(message),
            Ok(Record::RolledBack { .. }) => {}
            Ok(Record::Title { title }) => loaded.title = Some(title),
            Ok(Record::Reset { messages }) => loaded.messages = messages,
            Ok(Record::Model { endpoint, model }) => loaded.model = (endpoint, model),
            Ok(Record::Spent { usage, cost_usd }) => {
                // A cost no run can have (a hand-edited file) counts as unknown.
                loaded.spent = (usage, cost_usd.filter(|c| c.is_finite() && (0.0..1e9).contains(c)));
            }
            Ok(Record::Other) => {}
            Err(_) if !terminated => {
                // A crash mid-write leaves a last line without its newline: drop it.
                loaded.warnings.push(format!(
                    "repaired the end of {shown}: an incomplete last record (from an interrupted write) was dropped"
                ));
                break;
            }
            Err(e) => {
                loaded.warnings.push(format!("{shown}: line {lineno} is corrupt and was skipped ({e})"));
            }
        }
        loaded.valid_len = end as u64;
    }
    Ok(loaded)
}

/// Lines with the offset just past each (including its newline) and whether it had a newline.
fn split_lines(bytes: &[u8]) -> impl Iterator<Item = (&[u8], usize, bool)> {
    let mut pos = 0;
    std::iter::from_fn(move || {
        if pos >= bytes.len() {
            return None;
        }
        let start = pos;
        match bytes[start..].iter().position(|&b| b == b'\n') {
            Some(i) => {
                pos = start + i + 1;
                Some((&bytes[start..start + i], pos, true))
            }
            None => {
                pos = bytes.len();
                Some((&bytes[start..], pos, false))
            }
        }
    })
}
