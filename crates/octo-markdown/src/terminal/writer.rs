//! The parser's events written out as styled terminal lines.

use super::code::CodeLines;
use super::lines::{Block, BlockKind, Line, LineKind, Rendered};
use super::table::layout;
use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Tag, TagEnd};
use std::ops::Range;

const BOLD: &str = "1";
const ITALIC: &str = "3";
const STRIKE: &str = "9";
const HEADING: &str = "1;4";
const CODE: &str = "\x1b[36m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";
/// The marker of an unordered list item.
const BULLET: &str = "\x1b[36m•\x1b[39m ";

/// A container a line is inside (a list item, a quote): what starts its first line and what
/// starts the lines after.
struct Container {
    first: Option<String>,
    rest: String,
}

/// A table being read: its columns' alignment, its rows so far and the cell being written.
struct Table {
    aligns: Vec<Alignment>,
    rows: Vec<Vec<String>>,
    cell: Option<String>,
}

/// A link or image being read: its address and the text shown so far.
struct Link {
    url: String,
    text: String,
}

#[derive(Default)]
pub(super) struct Writer {
    out: Rendered,
    /// The line being written, if one is open.
    line: Option<String>,
    containers: Vec<Container>,
    /// The ANSI codes in force, innermost last.
    styles: Vec<&'static str>,
    links: Vec<Link>,
    /// The next number of each ordered list open (`None`: unordered).
    lists: Vec<Option<u64>>,
    /// A code block being read: its fence's info string and text.
    code: Option<(String, String)>,
    table: Option<Table>,
    /// How deep in blocks the parser is (0: between top-level blocks).
    depth: usize,
}

impl Writer {
    pub(super) fn finish(mut self) -> Rendered {
        self.end_line();
        self.out
    }

    pub(super) fn event(&mut self, event: Event<'_>, range: Range<usize>) {
        if let Some((_, text)) = &mut self.code {
            match event {
                Event::Text(t) => text.push_str(&t),
                Event::End(TagEnd::CodeBlock) => self.code_block(),
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag, range.start),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.text(&t),
            Event::Code(t) => {
                self.write(CODE);
                self.text(&t);
                self.restyle();
            }
            Event::Html(t) => {
                for part in t.split_inclusive('\n') {
                    self.text(part.trim_end_matches(['\n', '\r']));
                    if part.ends_with('\n') {
                        self.end_line();
                    }
                }
            }
            Event::InlineHtml(t) => self.text(&t),
            Event::SoftBreak | Event::HardBreak => self.end_line(),
            Event::Rule => {
                self.block(BlockKind::Rule, range.start);
                self.write(&format!("{DIM}{}{RESET}", "─".repeat(24)));
                self.end_line_as(LineKind::Fixed);
            }
            Event::TaskListMarker(done) => self.text(if done { "[x] " } else { "[ ] " }),
            Event::FootnoteReference(label) => self.text(&format!("[^{label}]")),
            Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t),
        }
    }

    fn start(&mut self, tag: Tag<'_>, at: usize) {
        let kind = match &tag {
            Tag::Paragraph | Tag::HtmlBlock | Tag::MetadataBlock(_) => Some(BlockKind::Paragraph),
            Tag::Heading { .. } => Some(BlockKind::Heading),
            Tag::BlockQuote(_) => Some(BlockKind::Quote),
            Tag::CodeBlock(_) => Some(BlockKind::Code),
            Tag::List(_) | Tag::DefinitionList => Some(BlockKind::List),
            Tag::Table(_) => Some(BlockKind::Table),
            Tag::Item
            | Tag::FootnoteDefinition(_)
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::TableHead
            | Tag::TableRow
            | Tag::TableCell => Some(BlockKind::Other),
            _ => None,
        };
        if let Some(kind) = kind {
            if !matches!(tag, Tag::TableHead | Tag::TableRow | Tag::TableCell) {
                self.block(kind, at);
            }
            self.depth += 1;
        }
        match tag {
            Tag::Heading { level, .. } => {
                self.styles.push(if level <= HeadingLevel::H2 { HEADING } else { BOLD });
            }
            Tag::BlockQuote(_) => {
                let bar = format!("{DIM}│{RESET} ");
                self.containers.push(Container { first: None, rest: bar });
            }
            Tag::CodeBlock(kind) => {
                let info = match kind {
                    CodeBlockKind::Fenced(info) => info.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((info, String::new()));
            }
            Tag::List(start) => self.lists.push(start),
            Tag::Item => self.item(),
            Tag::FootnoteDefinition(label) => {
                let first = format!("[^{label}]: ");
                let rest = " ".repeat(first.chars().count());
                self.containers.push(Container { first: Some(first), rest });
            }
            Tag::Table(aligns) => self.table = Some(Table { aligns, rows: Vec::new(), cell: None }),
            Tag::TableHead | Tag::TableRow => {
                if let Some(t) = &mut self.table {
                    t.rows.push(Vec::new());
                }
                if self.table.as_ref().is_some_and(|t| t.rows.len() == 1) {
                    self.styles.push(BOLD);
                }
            }
            Tag::TableCell => {
                let open = self.open_styles();
                if let Some(t) = &mut self.table {
                    t.cell = Some(open);
                }
            }
            Tag::Emphasis => self.push_style(ITALIC),
            Tag::Strong => self.push_style(BOLD),
            Tag::Strikethrough => self.push_style(STRIKE),
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                self.links.push(Link { url: dest_url.to_string(), text: String::new() });
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        if !matches!(
            tag,
            TagEnd::Emphasis
                | TagEnd::Strong
                | TagEnd::Strikethrough
                | TagEnd::Link
                | TagEnd::Image
                | TagEnd::Superscript
                | TagEnd::Subscript
        ) {
            self.depth = self.depth.saturating_sub(1);
        }
        match tag {
            TagEnd::Heading(_) => {
                self.end_line();
                self.styles.pop();
            }
            TagEnd::Paragraph | TagEnd::HtmlBlock => self.end_line(),
            TagEnd::BlockQuote(_) | TagEnd::Item | TagEnd::FootnoteDefinition => {
                self.end_line();
                self.containers.pop();
            }
            TagEnd::List(_) => {
                self.end_line();
                self.lists.pop();
            }
            TagEnd::TableHead => {
                self.styles.pop();
            }
            TagEnd::TableCell => {
                let close = if self.styles.is_empty() { "" } else { RESET };
                if let Some(t) = &mut self.table {
                    if let Some(mut cell) = t.cell.take() {
                        cell.push_str(close);
                        if let Some(row) = t.rows.last_mut() {
                            row.push(cell);
                        }
                    }
                }
            }
            TagEnd::Table => self.table_end(),
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
                self.restyle();
            }
            TagEnd::Link | TagEnd::Image => self.link_end(),
            _ => {}
        }
    }

    /// A block starts: a top-level one is recorded (after a blank line when one came before);
    /// a nested one starts on a line of its own.
    fn block(&mut self, kind: BlockKind, at: usize) {
        self.end_line();
        if self.depth == 0 {
            if !self.out.lines.is_empty() {
                self.out.lines.push(Line { text: String::new(), kind: LineKind::Prose });
            }
            self.out.blocks.push(Block { kind, first_line: self.out.lines.len(), source_start: at });
        }
    }

    fn item(&mut self) {
        let marker = match self.lists.last_mut() {
            Some(Some(n)) => {
                let m = format!("{n}. ");
                *n += 1;
                m
            }
            _ => BULLET.to_owned(),
        };
        let width = if marker == BULLET { 2 } else { marker.len() };
        self.containers.push(Container { first: Some(marker), rest: " ".repeat(width) });
    }

    fn text(&mut self, text: &str) {
        if let Some(link) = self.links.last_mut() {
            link.text.push_str(text);
        }
        self.write(text);
    }

    /// Writes into the table cell being read, or onto the current line (opening one).
    fn write(&mut self, s: &str) {
        if let Some(cell) = self.table.as_mut().and_then(|t| t.cell.as_mut()) {
            cell.push_str(s);
            return;
        }
        if self.line.is_none() {
            let mut line = String::new();
            for c in &mut self.containers {
                match c.first.take() {
                    Some(first) => line.push_str(&first),
                    None => line.push_str(&c.rest),
                }
            }
            line.push_str(&self.open_styles());
            self.line = Some(line);
        }
        if let Some(line) = &mut self.line {
            line.push_str(s);
        }
    }

    fn push_style(&mut self, code: &'static str) {
        self.styles.push(code);
        self.write(&format!("\x1b[{code}m"));
    }

    /// The sequence that turns on the styles in force (empty when none are).
    fn open_styles(&self) -> String {
        if self.styles.is_empty() {
            String::new()
        } else {
            format!("\x1b[{}m", self.styles.join(";"))
        }
    }

    /// Resets the styles and turns on those still in force.
    fn restyle(&mut self) {
        let open = self.open_styles();
        self.write(&format!("{RESET}{open}"));
    }

    fn link_end(&mut self) {
        let Some(link) = self.links.pop() else {
            return;
        };
        if let Some(outer) = self.links.last_mut() {
            outer.text.push_str(&link.text);
        }
        if !link.url.is_empty() && link.text != link.url && !link.url.starts_with('#') {
            let open = self.open_styles();
            self.write(&format!(" (\x1b[2;4m{}{RESET}{open})", link.url));
        }
    }

    fn end_line(&mut self) {
        self.end_line_as(LineKind::Prose);
    }

    fn end_line_as(&mut self, kind: LineKind) {
        if let Some(mut text) = self.line.take() {
            if !self.styles.is_empty() {
                text.push_str(RESET);
            }
            self.out.lines.push(Line { text, kind });
        }
    }

    /// Prints a fenced block: the fences dim, the code highlighted by its language.
    fn code_block(&mut self) {
        self.depth = self.depth.saturating_sub(1);
        let Some((info, text)) = self.code.take() else {
            return;
        };
        let styles = std::mem::take(&mut self.styles);
        self.write(&format!("{DIM}```{}{RESET}", info.trim()));
        self.end_line_as(LineKind::Fixed);
        let mut lines = CodeLines::new(&info);
        for line in text.lines() {
            let styled = lines.line(line);
            self.write(&styled);
            self.end_line_as(LineKind::Fixed);
        }
        self.write(&format!("{DIM}```{RESET}"));
        self.end_line_as(LineKind::Fixed);
        self.styles = styles;
    }

    fn table_end(&mut self) {
        let Some(table) = self.table.take() else {
            return;
        };
        for line in layout(&table.rows, &table.aligns) {
            self.write(&line);
            self.end_line_as(LineKind::Fixed);
        }
    }
}
