//! A hook's answer, read: its run, and the JSON object it printed, if any.

use crate::config::Event;
use crate::run::Ran;
use serde_json::{Map, Value};

/// A hook's answer, read.
pub(crate) struct Answer {
    pub(crate) ran: Ran,
    pub(crate) json: Option<Map<String, Value>>,
}

impl Answer {
    pub(crate) fn blocked(&self) -> bool {
        self.ran.code == Some(2)
    }

    pub(crate) fn ok(&self) -> bool {
        self.ran.code == Some(0)
    }

    pub(crate) fn field(&self, key: &str) -> Option<&Value> {
        self.json.as_ref()?.get(key)
    }

    pub(crate) fn specific(&self, key: &str) -> Option<&Value> {
        self.field("hookSpecificOutput")?.get(key)
    }

    pub(crate) fn text(&self, key: &str) -> Option<String> {
        self.field(key).and_then(Value::as_str).map(str::to_owned).filter(|s| !s.trim().is_empty())
    }

    /// Why it blocked: stderr, or a default naming the command.
    pub(crate) fn reason(&self, event: Event) -> String {
        let e = self.ran.stderr.trim();
        if e.is_empty() {
            format!("blocked by the {} hook `{}`", event.as_str(), self.ran.command)
        } else {
            e.to_owned()
        }
    }

    /// `additionalContext`, else plain stdout (exit 0, not JSON).
    pub(crate) fn context(&self) -> Option<String> {
        if let Some(c) = self.specific("additionalContext").and_then(Value::as_str) {
            return Some(c.to_owned()).filter(|c| !c.trim().is_empty());
        }
        if self.json.is_none() && self.ok() {
            let t = self.ran.stdout.trim();
            return (!t.is_empty()).then(|| t.to_owned());
        }
        None
    }

    pub(crate) fn stops(&self) -> bool {
        self.field("continue").and_then(Value::as_bool) == Some(false)
    }
}
