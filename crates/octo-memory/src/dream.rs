//! A dream: one model call that consolidates a scope's index — Scratch Notes and what the
//! session learned go into the sections, duplicates merge, contradicted lines go. This module
//! writes the request and checks the answer; the application makes the call, shows the diff and
//! keeps the previous index in its trash.

use crate::index;

/// The largest index a dream may return.
const MAX_INDEX_BYTES: usize = 64 * 1024;

/// The instruction and material for the consolidation call.
pub fn request(current: &str, transcript: &str) -> String {
    format!(
        "You maintain a coding agent's memory index (MEMORY.md). Rewrite it:\n\
         - keep exactly these sections, in this order, as `## ` headings: {}.\n\
         - move each Scratch Notes line that is still useful into the section it belongs to, as a short bullet; \
         leave Scratch Notes empty unless a note is still unresolved;\n\
         - add durable facts the conversation below established (stated preferences, corrections, project facts not in the code);\n\
         - merge duplicates; drop lines the conversation or newer lines contradict;\n\
         - keep every line that points at an entry file (`[name](name.md)`) exactly as it is unless it is contradicted;\n\
         - never include secrets, credentials or one-off task details.\n\
         Answer with the complete new MEMORY.md and nothing else.\n\n\
         <current-index>\n{}\n</current-index>\n\n<conversation>\n{}\n</conversation>",
        index::SECTIONS.join(", "),
        current.trim_end(),
        transcript.trim_end()
    )
}

/// Why a dream's answer cannot become the index (nothing is written then).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DreamError {
    /// The model said nothing.
    #[error("the model answered with nothing")]
    Empty,
    /// Too long for an index.
    #[error("the answer is {kb} KB, more than an index may be")]
    TooLarge {
        /// Its size.
        kb: usize,
    },
    /// The index's sections are not all there, once each.
    #[error("the answer is not an index: the section(s) {sections} are missing or repeated")]
    NotAnIndex {
        /// The sections missing or repeated.
        sections: String,
    },
}

/// The new index from the model's answer (a Markdown fence around it is removed), or why it
/// cannot be used — in which case nothing may be written.
pub fn accept(answer: &str) -> Result<String, DreamError> {
    let mut text = answer.trim();
    if let Some(rest) = text.strip_prefix("```") {
        let body = rest.split_once('\n').map_or("", |(_, b)| b);
        text = body.trim_end().strip_suffix("```").unwrap_or(body).trim();
    }
    if text.is_empty() {
        return Err(DreamError::Empty);
    }
    if text.len() > MAX_INDEX_BYTES {
        return Err(DreamError::TooLarge { kb: text.len() / 1024 });
    }
    if !index::structured(text) {
        let missing: Vec<&str> = index::SECTIONS
            .iter()
            .filter(|s| text.lines().filter(|l| l.strip_prefix("## ").map(str::trim) == Some(s)).count() != 1)
            .copied()
            .collect();
        return Err(DreamError::NotAnIndex { sections: missing.join(", ") });
    }
    Ok(format!("{text}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_whole_index_is_accepted() {
        let good = index::append_scratch(&index::empty(), "- kept");
        assert_eq!(accept(&format!("```markdown\n{good}```")).unwrap(), good);
        assert!(accept("Sure! Here you go.").unwrap_err().to_string().contains("missing"));
        assert!(accept("").is_err());
        assert!(accept(&"## User\n".repeat(2)).is_err());
        assert!(request("# Memory", "user: hi").contains("Consolidated Facts"));
    }
}
