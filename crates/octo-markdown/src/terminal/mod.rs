//! Markdown for a terminal: the same parser as the HTML, its result written as lines styled
//! with ANSI escapes — headings bold, emphasis in italics, struck text struck, inline code in a
//! colour, a link's address after its text, bullets and numbers for list items, a bar before
//! quoted lines, tables laid out in aligned columns, fenced code highlighted by its language.
//! Every line ends with its styles closed, so a line can be printed on its own.
//!
//! [`render`] also says where each top-level block starts, in the lines and in the source, so
//! a caller streaming an answer can print the blocks that can no longer change and render only
//! the rest again as text arrives.

mod code;
mod table;
mod writer;

pub use code::CodeLines;
pub use table::{strip_ansi, visible_width};

use pulldown_cmark::Parser;

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

/// `markdown` as styled terminal lines. The text must already be inert (no escape sequences of
/// its own): this adds styles, it does not filter.
pub fn render(markdown: &str) -> Rendered {
    let mut w = writer::Writer::default();
    for (event, range) in Parser::new_ext(markdown, crate::render::options()).into_offset_iter() {
        w.event(event, range);
    }
    w.finish()
}

#[cfg(test)]
mod tests;
