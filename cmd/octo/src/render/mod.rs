//! Streamed Markdown for the terminal, rendered by the same parser as the web UI
//! (`octo_markdown::terminal`) and printed without ever rewriting what is already on screen.
//!
//! The text read since the last block that can no longer change (the *window*) is rendered
//! again as lines complete, and the rendered lines not yet printed are printed: a paragraph, a
//! heading or a list item appears line by line, and the line being written streams word by
//! word while what is shown of it cannot change (a word with `*`, `` ` ``, `[` … waits for its
//! line's end, when its style is known). A table is held until it ends (its columns' widths
//! depend on every row). A fenced code block is printed line by line as its lines complete,
//! highlighted by its language, without rendering the window again. Prose is wrapped at word
//! boundaries to the terminal's width; code and tables are not. Without colour the Markdown
//! passes through as the model wrote it.

mod wrap;

use octo_markdown::terminal::{self, strip_ansi, BlockKind, CodeLines, Line, LineKind, Rendered};
use std::io::Write;

/// A block longer than this is printed as read so far and reading starts afresh (rendering the
/// window again at every line would otherwise grow with the square of its length).
const MAX_WINDOW: usize = 64 * 1024;

/// The line being written streams only while the window is smaller than this.
const MAX_LIVE: usize = 16 * 1024;

/// Characters that may yet turn into (or out of) a style when the line goes on.
const UNSETTLED: [char; 11] = ['*', '_', '`', '~', '[', ']', '<', '>', '&', '\\', '|'];

/// A streaming Markdown renderer.
#[derive(Debug, Default)]
pub struct Renderer {
    color: bool,
    /// Prose wrapped at word boundaries to the terminal's width (code and tables are not).
    wrap: Option<wrap::Wrap>,
    /// The Markdown read since the last block that can no longer change.
    window: String,
    /// Where the window's last line (the one being read) starts.
    line_start: usize,
    /// The end of the last text the line being read was rendered up to (once per word).
    live_end: usize,
    /// How many of the window's rendered lines are printed in full.
    printed: usize,
    /// The printed start of the window's next line, as rendered.
    partial: String,
    /// Rendered lines of the window are held back (a table, a line that may start one).
    holding: bool,
    /// Inside a fenced code block.
    fence: Option<Fence>,
    /// The code block's line being read (without colour: any line).
    line: String,
    /// Something was printed since the last finish (a code block gets a blank line before it).
    printed_any: bool,
    /// A blank line is owed before the next thing printed (a code block ended).
    owe_blank: bool,
}

/// An open fenced code block: its fence and its highlighter.
#[derive(Debug)]
struct Fence {
    marker: char,
    len: usize,
    lines: CodeLines,
}

impl Renderer {
    /// A renderer; `color` enables ANSI styles.
    pub fn new(color: bool) -> Self {
        Self { color, ..Self::default() }
    }

    /// A renderer that wraps prose at word boundaries to `width` columns.
    pub fn with_width(color: bool, width: Option<usize>) -> Self {
        Self { wrap: width.map(wrap::Wrap::new), ..Self::new(color) }
    }

    /// Whether the cursor is at the start of a line and nothing is held back.
    pub fn at_line_start(&self) -> bool {
        self.line.is_empty()
            && self.partial.is_empty()
            && !self.holding
            && (self.window.is_empty() || self.window.ends_with('\n'))
    }

    /// Renders a piece of streamed text.
    pub fn text(&mut self, delta: &str, out: &mut impl Write) {
        if self.color {
            for seg in delta.split_inclusive('\n') {
                self.segment(seg, out);
            }
            if self.fence.is_none() {
                self.live(out);
            }
        } else {
            self.raw(delta, out);
        }
        let _ = out.flush();
    }

    /// Prints what is held back (a partial line, a table) at the end of a response.
    pub fn finish(&mut self, out: &mut impl Write) {
        if let Some(mut fence) = self.fence.take() {
            let line = std::mem::take(&mut self.line);
            if !line.is_empty() {
                let styled = if self.color { fence.lines.line(&line) } else { line };
                self.emit(&format!("{styled}\n"), false, out);
            }
        } else if self.color {
            self.settle(out);
        } else if !std::mem::take(&mut self.line).is_empty() {
            self.emit("\n", true, out);
        }
        if let Some(w) = &mut self.wrap {
            let mut held = String::new();
            w.flush(&mut held);
            let _ = out.write_all(held.as_bytes());
        }
        self.printed_any = false;
        self.owe_blank = false;
        let _ = out.flush();
    }

    /// One piece of text ending at most one line.
    fn segment(&mut self, seg: &str, out: &mut impl Write) {
        if self.fence.is_some() {
            self.line.push_str(seg);
            if seg.ends_with('\n') {
                let line = std::mem::take(&mut self.line);
                self.code_line(line.trim_end_matches(['\n', '\r']), out);
            }
            return;
        }
        self.window.push_str(seg);
        if !seg.ends_with('\n') {
            if self.window.len() - self.line_start > MAX_WINDOW {
                // One line longer than a whole window: printed as it is so far.
                self.settle(out);
            }
            return;
        }
        let line_start = std::mem::replace(&mut self.line_start, self.window.len());
        let line = self.window[line_start..].trim_end_matches(['\n', '\r']).to_owned();
        if let Some((marker, len)) = fence_open(&line) {
            self.window.truncate(line_start);
            self.line_start = line_start;
            self.settle(out);
            if self.printed_any {
                self.emit("\n", true, out);
            }
            self.emit(&format!("\x1b[2m{line}\x1b[0m\n"), false, out);
            self.printed_any = true;
            self.fence = Some(Fence { marker, len, lines: CodeLines::new(&line.trim_start()[len..]) });
            return;
        }
        self.update(out);
    }

    /// A complete line inside a code block: highlighted, or the closing fence.
    fn code_line(&mut self, line: &str, out: &mut impl Write) {
        let Some(fence) = &mut self.fence else {
            return;
        };
        if fence_closes(line, fence.marker, fence.len) {
            self.fence = None;
            self.emit(&format!("\x1b[2m{line}\x1b[0m\n"), false, out);
            self.owe_blank = true;
        } else {
            let styled = fence.lines.line(line);
            self.emit(&format!("{styled}\n"), false, out);
        }
    }

    /// The window's complete lines rendered again: the new lines printed, the blocks that can no
    /// longer change dropped from the window.
    fn update(&mut self, out: &mut impl Write) {
        let complete = self.line_start;
        let r = terminal::render(&self.window[..complete]);
        let hold = held_from(&r, &self.window[..complete]);
        self.holding = hold < r.lines.len();
        self.print_lines(&r.lines[..hold], out);
        if let [.., last] = r.blocks.as_slice() {
            if r.blocks.len() >= 2 && self.printed >= last.first_line {
                self.window.drain(..last.source_start);
                self.line_start -= last.source_start;
                self.live_end = 0;
                self.printed -= last.first_line;
            }
        }
        if self.window.len() > MAX_WINDOW && self.window.ends_with('\n') {
            self.settle(out);
        }
    }

    /// Prints the words of the line being written that can no longer change.
    fn live(&mut self, out: &mut impl Write) {
        let complete = self.line_start;
        let tail = &self.window[complete..];
        if tail.is_empty() || self.holding || self.window.len() > MAX_LIVE {
            return;
        }
        if tail.trim_start().starts_with(['|', '`', '~', '<']) {
            return;
        }
        let Some(cut) = tail.rfind(char::is_whitespace) else {
            return;
        };
        if !tail[..cut].chars().any(char::is_alphanumeric) || complete + cut == self.live_end {
            return;
        }
        self.live_end = complete + cut;
        let r = terminal::render(&self.window[..complete + cut]);
        let Some((last, before)) = r.lines.split_last() else {
            return;
        };
        let new = before.get(self.printed..).unwrap_or_default();
        if before.len() < self.printed
            || !new.iter().all(|l| l.text.is_empty())
            || !self.partial.is_empty() && !new.is_empty()
            || matches!(r.blocks.last().map(|b| b.kind), Some(BlockKind::Code | BlockKind::Table))
            || last.kind != LineKind::Prose
            || strip_ansi(&last.text).contains(UNSETTLED)
        {
            return;
        }
        let Some(rest) = last.text.strip_prefix(&self.partial) else {
            return;
        };
        if rest.is_empty() {
            return;
        }
        let rest = rest.to_owned();
        self.print_lines(before, out);
        self.before_output(out);
        self.emit(&rest, true, out);
        self.partial = last.text.clone();
    }

    /// Renders and prints the whole window, then starts a new one.
    fn settle(&mut self, out: &mut impl Write) {
        if !self.window.is_empty() {
            let r = terminal::render(&self.window);
            self.print_lines(&r.lines, out);
        }
        self.window.clear();
        self.line_start = 0;
        self.live_end = 0;
        self.printed = 0;
        self.partial.clear();
        self.holding = false;
    }

    /// Prints the rendered lines past those already printed.
    fn print_lines(&mut self, lines: &[Line], out: &mut impl Write) {
        for line in lines.get(self.printed..).unwrap_or_default() {
            self.before_output(out);
            let partial = std::mem::take(&mut self.partial);
            let text = match line.text.strip_prefix(&partial) {
                Some(rest) => rest.to_owned(),
                // What was shown of the line changed after all: the line again, whole.
                None => format!("\n{}", line.text),
            };
            self.emit(&format!("{text}\n"), line.kind == LineKind::Prose, out);
            self.printed += 1;
        }
    }

    /// Pays a blank line owed after a code block.
    fn before_output(&mut self, out: &mut impl Write) {
        if std::mem::take(&mut self.owe_blank) {
            self.emit("\n", true, out);
        }
        self.printed_any = true;
    }

    /// Without colour: the text as it is, code lines left unwrapped.
    fn raw(&mut self, delta: &str, out: &mut impl Write) {
        for seg in delta.split_inclusive('\n') {
            self.emit(seg, self.fence.is_none(), out);
            self.line.push_str(seg);
            if !seg.ends_with('\n') {
                continue;
            }
            let line = std::mem::take(&mut self.line);
            let line = line.trim_end_matches(['\n', '\r']);
            match &self.fence {
                Some(f) if fence_closes(line, f.marker, f.len) => self.fence = None,
                Some(_) => {}
                None => {
                    if let Some((marker, len)) = fence_open(line) {
                        self.fence = Some(Fence { marker, len, lines: CodeLines::new("") });
                    }
                }
            }
        }
    }

    /// Writes `text`: prose through the wrapping (when there is one), the rest as it is.
    fn emit(&mut self, text: &str, prose: bool, out: &mut impl Write) {
        match &mut self.wrap {
            Some(w) if prose => {
                let mut wrapped = String::with_capacity(text.len() + 8);
                w.push(text, &mut wrapped);
                let _ = out.write_all(wrapped.as_bytes());
            }
            Some(w) => {
                let mut held = String::new();
                w.flush(&mut held);
                w.passed(text);
                let _ = out.write_all(held.as_bytes());
                let _ = out.write_all(text.as_bytes());
            }
            None => {
                let _ = out.write_all(text.as_bytes());
            }
        }
    }
}

/// Where the lines still to be held back start: a table (its widths wait for its last row), or
/// a last line starting with `|` (the header of a table whose separator has not come yet).
fn held_from(r: &Rendered, source: &str) -> usize {
    let n = r.lines.len();
    match r.blocks.last() {
        Some(b) if b.kind == BlockKind::Table => b.first_line.min(n),
        Some(b) if b.kind == BlockKind::Paragraph => {
            let last = source.trim_end_matches('\n').rsplit('\n').next().unwrap_or_default();
            if last.trim_start().starts_with('|') {
                n.saturating_sub(1).max(b.first_line)
            } else {
                n
            }
        }
        _ => n,
    }
}

/// The fence a line opens a code block with (its character and length): at least three
/// backticks or tildes, indented less than four columns.
fn fence_open(line: &str) -> Option<(char, usize)> {
    let t = line.trim_start_matches(' ');
    if line.len() - t.len() > 3 {
        return None;
    }
    let marker = t.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let len = t.chars().take_while(|c| *c == marker).count();
    (len >= 3 && !(marker == '`' && t[len..].contains('`'))).then_some((marker, len))
}

/// Whether `line` closes a block opened by `len` of `marker`.
fn fence_closes(line: &str, marker: char, len: usize) -> bool {
    let t = line.trim();
    line.len() - line.trim_start_matches(' ').len() <= 3
        && t.chars().count() >= len
        && t.chars().all(|c| c == marker)
}

#[cfg(test)]
mod tests;
