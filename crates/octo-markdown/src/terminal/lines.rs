//! What the terminal renderer produces: styled lines and where each top-level block starts.

/// How a line may be printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// Prose, which may be wrapped at word boundaries to the terminal's width.
    Prose,
    /// Code, a table or a rule: printed as it is.
    Fixed,
}

/// One line to print (without its newline).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The styled text.
    pub text: String,
    /// How it may be printed.
    pub kind: LineKind,
}

/// What a top-level block is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    /// A paragraph (or a block of raw HTML, shown as text).
    Paragraph,
    /// A heading.
    Heading,
    /// A list.
    List,
    /// A block quote.
    Quote,
    /// Fenced or indented code.
    Code,
    /// A table.
    Table,
    /// A thematic break.
    Rule,
    /// Anything else (a footnote's definition).
    Other,
}

/// Where a top-level block starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    /// What it is.
    pub kind: BlockKind,
    /// The index of its first line in [`Rendered::lines`] (top-level blocks are separated by a
    /// blank line, which comes before this one).
    pub first_line: usize,
    /// The byte offset in the source where it starts.
    pub source_start: usize,
}

/// Rendered Markdown.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rendered {
    /// The lines to print, in order.
    pub lines: Vec<Line>,
    /// Where each top-level block starts.
    pub blocks: Vec<Block>,
}
