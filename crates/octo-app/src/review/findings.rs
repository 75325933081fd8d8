//! Reading the model's review: one JSON object at the end of its answer (in a ```json block or
//! bare), with a verdict and findings of a fixed shape. An answer that does not hold one is an
//! error — shown as text, never taken for a pass.

use serde::{Deserialize, Serialize};

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Style, naming, small clean-ups.
    Low,
    /// A real problem in a corner case, a missing test.
    Medium,
    /// A bug, a security hole, data loss.
    High,
}

impl Severity {
    /// Reads `high|medium|low` (and the usual synonyms: critical, major, minor, nit, info).
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "high" | "critical" | "blocker" | "severe" | "error" => Some(Self::High),
            "medium" | "major" | "moderate" | "warning" => Some(Self::Medium),
            "low" | "minor" | "nit" | "info" | "trivial" | "suggestion" => Some(Self::Low),
            _ => None,
        }
    }

    /// `high`, `medium` or `low`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::High => "high",
            Self::Medium => "medium",
            Self::Low => "low",
        }
    }
}

/// The review's conclusion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Good to go.
    Approve,
    /// Needs changes first.
    RequestChanges,
    /// Remarks, nothing blocking.
    Comment,
}

/// One problem found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The file, relative to the repository.
    pub file: String,
    /// The line, when one is named.
    pub line: Option<u64>,
    /// How much it matters.
    pub severity: Severity,
    /// One line.
    pub title: String,
    /// Why it is a problem.
    pub explanation: String,
    /// What to change, when the model said.
    pub suggestion: Option<String>,
}

/// A review as the model gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Review {
    /// Its conclusion.
    pub verdict: Verdict,
    /// What it found, most severe first.
    pub findings: Vec<Finding>,
}

#[derive(Deserialize)]
struct RawReview {
    verdict: Option<String>,
    findings: Vec<RawFinding>,
}

#[derive(Deserialize)]
struct RawFinding {
    file: Option<String>,
    #[serde(default)]
    line: Option<serde_json::Value>,
    severity: String,
    title: String,
    #[serde(default)]
    explanation: String,
    #[serde(default)]
    suggestion: Option<String>,
}

/// Why the answer's findings could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FindingsError {
    /// No JSON object with the findings at the end of the answer.
    #[error("the answer holds no JSON object with the findings")]
    Missing,
    /// JSON, but not the asked-for shape; serde's words.
    #[error("the findings do not have the asked-for shape: {0}")]
    Shape(String),
    /// A severity other than high, medium or low.
    #[error("`{0}` is not a severity (high, medium or low)")]
    Severity(String),
    /// A verdict other than approve, request_changes or comment.
    #[error("`{0}` is not a verdict (approve, request_changes or comment)")]
    Verdict(String),
    /// The review turn itself failed; its error.
    #[error("{0}")]
    Turn(String),
}

/// Reads the review at the end of `answer`; the error says what was wrong with it.
pub fn parse(answer: &str) -> Result<Review, FindingsError> {
    let json = last_object(answer).ok_or(FindingsError::Missing)?;
    let raw: RawReview = serde_json::from_str(json).map_err(|e| FindingsError::Shape(e.to_string()))?;
    let mut findings = Vec::new();
    for f in raw.findings {
        let severity =
            Severity::parse(&f.severity).ok_or_else(|| FindingsError::Severity(f.severity.clone()))?;
        let line = match f.line {
            Some(serde_json::Value::Number(n)) => n.as_u64(),
            Some(serde_json::Value::String(s)) => {
                s.trim().split(['-', ':']).next().and_then(|s| s.parse().ok())
            }
            _ => None,
        };
        findings.push(Finding {
            file: f.file.unwrap_or_default(),
            line,
            severity,
            title: f.title,
            explanation: f.explanation,
            suggestion: f.suggestion.filter(|s| !s.trim().is_empty()),
        });
    }
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    let verdict = match raw.verdict.as_deref().map(str::to_ascii_lowercase).as_deref() {
        Some("approve" | "approved" | "pass" | "lgtm") => Verdict::Approve,
        Some("request_changes" | "request changes" | "changes_requested" | "reject") => {
            Verdict::RequestChanges
        }
        Some("comment" | "comments") => Verdict::Comment,
        Some(other) => return Err(FindingsError::Verdict(other.to_owned())),
        None if findings.iter().any(|f| f.severity == Severity::High) => Verdict::RequestChanges,
        None if findings.is_empty() => Verdict::Approve,
        None => Verdict::Comment,
    };
    Ok(Review { verdict, findings })
}

/// The last ```json block of `text`, else its last top-level `{…}` that mentions `findings`.
fn last_object(text: &str) -> Option<&str> {
    if let Some(start) = text.rfind("```json") {
        let body = &text[start + 7..];
        if let Some(end) = body.find("```") {
            return Some(body[..end].trim());
        }
    }
    let end = text.rfind('}')?;
    let mut depth = 0usize;
    for (i, c) in text[..=end].char_indices().rev() {
        match c {
            '}' => depth += 1,
            '{' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    let candidate = &text[i..=end];
                    return candidate.contains("findings").then_some(candidate);
                }
            }
            _ => {}
        }
    }
    None
}

impl Review {
    /// Whether a finding is at `level` or above.
    pub fn fails_at(&self, level: Severity) -> bool {
        self.findings.iter().any(|f| f.severity >= level)
    }

    /// The review as plain lines: the verdict, then each finding.
    pub fn lines(&self) -> Vec<String> {
        let verdict = match self.verdict {
            Verdict::Approve => "approve",
            Verdict::RequestChanges => "request changes",
            Verdict::Comment => "comment",
        };
        let count = |s: Severity| self.findings.iter().filter(|f| f.severity == s).count();
        let mut out = vec![if self.findings.is_empty() {
            format!("review: {verdict}, no findings")
        } else {
            format!(
                "review: {verdict}, {} finding(s): {} high, {} medium, {} low",
                self.findings.len(),
                count(Severity::High),
                count(Severity::Medium),
                count(Severity::Low)
            )
        }];
        for f in &self.findings {
            let at = match f.line {
                Some(l) => format!("{}:{l}", f.file),
                None => f.file.clone(),
            };
            out.push(format!("  [{}] {at}  {}", f.severity.as_str(), f.title));
            if !f.explanation.trim().is_empty() {
                out.extend(f.explanation.trim().lines().map(|l| format!("      {l}")));
            }
            if let Some(s) = &f.suggestion {
                out.push(format!("      suggestion: {}", s.trim().replace('\n', "\n      ")));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_json_block_is_the_review() {
        let answer = "I looked at it.\n```json\n{\"verdict\": \"request_changes\", \"findings\": [\
            {\"file\": \"src/a.rs\", \"line\": 3, \"severity\": \"low\", \"title\": \"naming\", \"explanation\": \"x\"},\
            {\"file\": \"src/b.rs\", \"line\": \"10-12\", \"severity\": \"Critical\", \"title\": \"overflow\", \"explanation\": \"y\", \"suggestion\": \"use checked_add\"}]}\n```";
        let r = parse(answer).unwrap();
        assert_eq!(r.verdict, Verdict::RequestChanges);
        assert_eq!(r.findings[0].severity, Severity::High, "most severe first");
        assert_eq!(r.findings[0].line, Some(10));
        assert!(r.fails_at(Severity::Medium) && !Review { findings: vec![], ..r }.fails_at(Severity::Low));
        let lines = r.lines().join("\n");
        assert!(
            lines.contains("[high] src/b.rs:10  overflow") && lines.contains("suggestion: use checked_add"),
            "{lines}"
        );
    }

    #[test]
    fn a_bare_object_counts_and_anything_else_is_an_error() {
        let r = parse("All good. {\"findings\": []}").unwrap();
        assert_eq!((r.verdict, r.findings.len()), (Verdict::Approve, 0));
        assert!(parse("Looks fine to me!").unwrap_err().to_string().contains("no JSON object"));
        assert!(parse("{\"findings\": [{\"title\": \"t\"}]}").unwrap_err().to_string().contains("shape"));
        assert!(parse(
            "```json\n{\"findings\": [{\"file\":\"a\",\"severity\":\"urgent\",\"title\":\"t\"}]}\n```"
        )
        .unwrap_err()
        .to_string()
        .contains("not a severity"));
    }
}
