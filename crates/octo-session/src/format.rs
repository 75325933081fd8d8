//! The on-disk format: one JSONL file per session, a meta record first, then one record per
//! message (and occasional title updates).

use octo_agent::Message;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

/// The format version this build writes. Files of this or an older version load; newer ones are
/// refused rather than misread.
pub const FORMAT_VERSION: u32 = 1;

/// The first line of a session file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    /// Format version.
    pub version: u32,
    /// Session id (sortable by creation time).
    pub id: String,
    /// Creation time, seconds since the Unix epoch.
    pub created: u64,
    /// The directory the session belongs to.
    pub cwd: PathBuf,
    /// Endpoint id at creation.
    #[serde(default)]
    pub endpoint: String,
    /// Model at creation.
    #[serde(default)]
    pub model: String,
    /// Title at creation (usually none; titles come later as records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The session this one was branched from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
}

/// One line after the meta line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    /// A message of the conversation.
    Message {
        /// When it was written, seconds since the Unix epoch (0 when a file did not say).
        #[serde(default)]
        at: u64,
        /// The message.
        message: Message,
    },
    /// A (new) title.
    Title {
        /// The title.
        title: String,
    },
    /// The history was rewritten (compacted or repaired): these messages replace all earlier ones.
    Reset {
        /// The new history.
        messages: Vec<Message>,
    },
    /// The user sent this message and a turn started on it. Until a message record follows,
    /// the turn has not completed a round: a crash or a failure leaves it unanswered, and a
    /// resumed session offers to send it again.
    Pending {
        /// When, seconds since the Unix epoch.
        #[serde(default)]
        at: u64,
        /// The message as the user sent it.
        message: Message,
    },
    /// The pending message's turn failed or was cancelled before completing a round: the model
    /// never saw an answer to it, and the history holds nothing of it.
    RolledBack {
        /// When, seconds since the Unix epoch.
        #[serde(default)]
        at: u64,
        /// Why (`failed`, `cancelled`).
        reason: String,
    },
    /// The model changed.
    Model {
        /// Endpoint id.
        endpoint: String,
        /// Model id.
        model: String,
    },
    /// What the session has spent so far, written after each turn (the last one counts): a
    /// resumed session's totals go on from it.
    Spent {
        /// The session's tokens.
        usage: octo_agent::Usage,
        /// Their cost in USD, when the models' prices were known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
    },
    /// A record kind this version does not know (written by a newer octo of the same format
    /// version, e.g. bookkeeping); loading skips it.
    #[serde(other)]
    Other,
}

/// The meta line as written: the meta fields plus `"type": "meta"`.
#[derive(Serialize, Deserialize)]
pub(crate) struct MetaLine {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(flatten)]
    pub meta: Meta,
}

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// A new session id: UTC date and time, then random hex, so ids sort by creation.
pub fn new_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let secs = now();
    let days = (secs / 86_400) as i64;
    let (y, m, d) = civil_from_days(days);
    let t = secs % 86_400;
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0));
    format!("{y:04}{m:02}{d:02}-{:02}{:02}{:02}-{:04x}", t / 3600, t / 60 % 60, t % 60, h.finish() & 0xffff)
}

/// Days since 1970-01-01 → (year, month, day) (Howard Hinnant's algorithm).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// "5m ago", "3h ago", "2d ago".
pub fn age(secs: u64, now: u64) -> String {
    let d = now.saturating_sub(secs);
    match d {
        0..=59 => "just now".into(),
        60..=3599 => format!("{}m ago", d / 60),
        3600..=86_399 => format!("{}h ago", d / 3600),
        _ => format!("{}d ago", d / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_sort_by_time_and_dates_are_right() {
        let a = new_id();
        assert_eq!(a.len(), "20261130-090000-abcd".len(), "{a}");
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_422), (2025, 11, 30));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(age(100, 100), "just now");
        assert_eq!(age(0, 7200), "2h ago");
    }
}
