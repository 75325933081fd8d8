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
mod lines;
mod table;
mod writer;

pub use code::CodeLines;
pub use lines::{Block, BlockKind, Line, LineKind, Rendered};
pub use table::{strip_ansi, visible_width};

use pulldown_cmark::Parser;

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
