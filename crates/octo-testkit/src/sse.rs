//! Building Server-Sent Events bodies by hand.

use serde_json::Value;

/// An SSE body under construction: `event:` / `data:` records separated by blank lines.
#[derive(Debug, Clone, Default)]
pub struct SseBody {
    body: String,
}

impl SseBody {
    /// An empty body.
    pub fn new() -> Self {
        Self::default()
    }

    /// A record with an optional `event:` line and a JSON `data:` line.
    pub fn event(mut self, name: Option<&str>, data: &Value) -> Self {
        if let Some(name) = name {
            self.body.push_str("event: ");
            self.body.push_str(name);
            self.body.push('\n');
        }
        self.body.push_str("data: ");
        self.body.push_str(&data.to_string());
        self.body.push_str("\n\n");
        self
    }

    /// A record whose `data:` line is `raw` verbatim (for `[DONE]` or deliberately broken JSON).
    pub fn raw_data(mut self, raw: &str) -> Self {
        self.body.push_str("data: ");
        self.body.push_str(raw);
        self.body.push_str("\n\n");
        self
    }

    /// Text appended verbatim (comments, keep-alives, a record cut short).
    pub fn raw(mut self, text: &str) -> Self {
        self.body.push_str(text);
        self
    }

    /// The finished body.
    pub fn build(self) -> String {
        self.body
    }
}

/// Splits `text` into pieces of at most `size` characters, so scripted text arrives as several
/// deltas the way real models send it.
pub fn chunks(text: &str, size: usize) -> Vec<String> {
    let size = size.max(1);
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn records_are_blank_line_separated() {
        let b = SseBody::new()
            .event(Some("ping"), &json!({"type": "ping"}))
            .raw_data("[DONE]")
            .raw(": keep-alive\n\n")
            .build();
        assert_eq!(b, "event: ping\ndata: {\"type\":\"ping\"}\n\ndata: [DONE]\n\n: keep-alive\n\n");
    }

    #[test]
    fn chunks_split_on_characters() {
        assert_eq!(chunks("héllo", 2), ["hé", "ll", "o"]);
        assert!(chunks("", 3).is_empty());
    }
}
