//! One memory entry: a Markdown file with frontmatter (`name`, `description`, `type`,
//! `updated`) and the fact itself as its body.

use yaml_serde::Value;

/// What an entry is about; it decides the index section its line goes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// Who the user is and how they like to work.
    User,
    /// A correction or instruction the user gave ("don't mock the database").
    Feedback,
    /// A fact about the project that is not in its code.
    Project,
    /// Where to find something (a dashboard, a runbook, a ticket tracker).
    Reference,
}

impl Kind {
    /// Every kind, in index order.
    pub const ALL: [Kind; 4] = [Kind::User, Kind::Feedback, Kind::Project, Kind::Reference];

    /// Its name in frontmatter and tool arguments.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Feedback => "feedback",
            Self::Project => "project",
            Self::Reference => "reference",
        }
    }

    /// The index section its entries are listed in.
    pub fn section(self) -> &'static str {
        match self {
            Self::User => "User",
            Self::Feedback => "Constraints",
            Self::Project => "Project",
            Self::Reference => "Consolidated Facts",
        }
    }
}

impl std::str::FromStr for Kind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|k| k.as_str() == s.trim())
            .ok_or_else(|| format!("`{s}` is not a memory type; use user, feedback, project or reference"))
    }
}

/// Why an entry's file cannot be read as an entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EntryError {
    /// No `---` block at the top.
    #[error("it has no frontmatter (a `---` block at the top)")]
    NoFrontmatter,
    /// The `---` block never ends.
    #[error("its frontmatter is never closed by a `---` line")]
    Unclosed,
    /// The block is not YAML.
    #[error("its frontmatter is not valid YAML: {0}")]
    Yaml(String),
    /// A required key is missing.
    #[error("its frontmatter has no `{0}`")]
    Missing(&'static str),
    /// `name` differs from the file's name.
    #[error("its name `{name}` is not its file's name `{stem}`")]
    NameMismatch {
        /// The name in the file.
        name: String,
        /// The file's name without `.md`.
        stem: String,
    },
    /// `type` is not a memory type.
    #[error("{0}")]
    Kind(String),
}

/// A memory entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its name (also its file name without `.md`).
    pub name: String,
    /// One line about it, for the index and search.
    pub description: String,
    /// What it is about.
    pub kind: Kind,
    /// When it was last saved (`YYYY-MM-DD HH:MM` UTC).
    pub updated: String,
    /// The fact, in Markdown.
    pub body: String,
}

impl Entry {
    /// The file's text.
    pub fn render(&self) -> String {
        let quote = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
        format!(
            "---\nname: {}\ndescription: {}\ntype: {}\nupdated: {}\n---\n{}\n",
            self.name,
            quote(&one_line(&self.description)),
            self.kind.as_str(),
            quote(&self.updated),
            self.body.trim_end()
        )
    }

    /// Reads an entry's file text; `stem` is its file name without `.md`.
    pub fn parse(text: &str, stem: &str) -> Result<Self, EntryError> {
        let rest = text
            .strip_prefix("---\n")
            .or_else(|| text.strip_prefix("---\r\n"))
            .ok_or(EntryError::NoFrontmatter)?;
        let end = rest.find("\n---").ok_or(EntryError::Unclosed)?;
        let yaml = &rest[..end];
        let body = rest[end + 4..].trim_start_matches(['\r', '\n']);
        let v: Value = yaml_serde::from_str(yaml).map_err(|e| EntryError::Yaml(e.to_string()))?;
        let field = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        let name = field("name").ok_or(EntryError::Missing("name"))?;
        if name != stem {
            return Err(EntryError::NameMismatch { name, stem: stem.to_owned() });
        }
        let kind =
            field("type").ok_or(EntryError::Missing("type"))?.parse::<Kind>().map_err(EntryError::Kind)?;
        Ok(Self {
            name,
            description: field("description").unwrap_or_default(),
            kind,
            updated: field("updated").unwrap_or_default(),
            body: body.trim_end().to_owned(),
        })
    }
}

/// Whether `name` works as an entry name (and file name): 1 to 64 lowercase letters, digits,
/// `-` and `_`, starting with a letter or digit.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        && name.as_bytes()[0].is_ascii_alphanumeric()
}

/// `text` on one line, whitespace collapsed.
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_bad_ones_say_why() {
        let e = Entry {
            name: "tabs".into(),
            description: "Prefers \"tabs\"\nover spaces".into(),
            kind: Kind::User,
            updated: "2026-11-30 10:00".into(),
            body: "Use tabs in Go files.\n".into(),
        };
        let text = e.render();
        let back = Entry::parse(&text, "tabs").unwrap();
        assert_eq!(back.description, "Prefers \"tabs\" over spaces");
        assert_eq!((back.kind, back.body.as_str()), (Kind::User, "Use tabs in Go files."));
        assert!(Entry::parse(&text, "other").unwrap_err().to_string().contains("not its file's name"));
        assert!(Entry::parse("no front", "x").unwrap_err().to_string().contains("no frontmatter"));
        assert!(Entry::parse("---\nname: [x\n---\n", "x")
            .unwrap_err()
            .to_string()
            .contains("not valid YAML"));
        assert!(Entry::parse("---\nname: x\ntype: gossip\n---\n", "x")
            .unwrap_err()
            .to_string()
            .contains("not a memory type"));
        assert!(valid_name("db-tests_2") && !valid_name("../x") && !valid_name("") && !valid_name("-x"));
    }
}
