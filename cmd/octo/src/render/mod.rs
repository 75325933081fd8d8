//! Rendering streamed Markdown for the terminal, line by line, without ever rewriting what is
//! already printed: ordinary lines stream as they arrive, with `**bold**`, `` `code` `` and
//! `[text](url)` links styled on the fly; headings, list items and code lines are held until their
//! newline and printed styled (bullets for list markers, code highlighted by its language's
//! grammar, see [`code`]); table rows are held until the table ends and printed aligned (see
//! [`table`]). Every style is closed by the end of its line. Without color the Markdown passes
//! through unchanged, but for headings, which lose their `#`s.

mod code;
mod inline;
mod table;
mod wrap;

use code::CodeBlock;
use inline::Inline;
use std::io::Write;

/// A streaming Markdown renderer.
#[derive(Debug, Default)]
pub struct Renderer {
    color: bool,
    /// Inside a fenced code block.
    code: Option<CodeBlock>,
    /// The current line, when it is being held for styling.
    held: String,
    /// The current line is streaming raw (decided at its first character).
    raw_line: bool,
    /// Nothing of the current line has been seen yet.
    at_line_start: bool,
    /// Inline styles open on the current line.
    inline: Inline,
    /// The rows of a table being read (color only), printed when it ends.
    table: Vec<String>,
    /// Prose wrapped at word boundaries to the terminal's width (code and tables are not).
    wrap: Option<wrap::Wrap>,
}

impl Renderer {
    /// A renderer; `color` enables ANSI styles.
    pub fn new(color: bool) -> Self {
        Self { color, at_line_start: true, ..Self::default() }
    }

    /// A renderer that wraps prose at word boundaries to `width` columns.
    pub fn with_width(color: bool, width: Option<usize>) -> Self {
        Self { wrap: width.map(wrap::Wrap::new), ..Self::new(color) }
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

    /// Whether the cursor is at the start of a line (and nothing is held back).
    pub fn at_line_start(&self) -> bool {
        self.at_line_start && self.held.is_empty() && self.table.is_empty()
    }

    /// Renders a piece of streamed text.
    pub fn text(&mut self, delta: &str, out: &mut impl Write) {
        for seg in delta.split_inclusive('\n') {
            if self.at_line_start {
                self.at_line_start = false;
                let t = seg.trim_start();
                self.raw_line = !(self.code.is_some()
                    || t.starts_with('#')
                    || t.starts_with("```")
                    || self.color && t.starts_with(['-', '*', '+', '|'])
                    // Blanks or backticks that may yet become a fence: wait and see.
                    || !seg.ends_with('\n') && "```".starts_with(t));
                if self.raw_line {
                    self.flush_table(out);
                }
            }
            if self.raw_line && self.color {
                let mut styled = String::with_capacity(seg.len() + 8);
                self.inline.push(seg, &mut styled);
                self.emit(&styled, true, out);
            } else if self.raw_line {
                self.emit(seg, true, out);
            } else {
                self.held.push_str(seg);
            }
            if seg.ends_with('\n') {
                if !self.raw_line {
                    let line = std::mem::take(&mut self.held);
                    self.complete(line.trim_end_matches('\n'), true, out);
                }
                self.at_line_start = true;
                self.raw_line = false;
            }
        }
        let _ = out.flush();
    }

    /// Prints what is held back (a partial line, a table) at the end of a response.
    pub fn finish(&mut self, out: &mut impl Write) {
        let mut tail = String::new();
        self.inline.end(&mut tail);
        self.emit(&tail, true, out);
        let mut at_start = self.at_line_start;
        if !self.held.is_empty() {
            let line = std::mem::take(&mut self.held);
            at_start = self.complete(&line, false, out);
        }
        self.flush_table(out);
        if !at_start {
            self.emit("\n", true, out);
        }
        if let Some(w) = &mut self.wrap {
            let mut held = String::new();
            w.flush(&mut held);
            let _ = out.write_all(held.as_bytes());
        }
        self.at_line_start = true;
        self.raw_line = false;
        self.code = None;
        let _ = out.flush();
    }

    /// Handles a complete held line: a table row is kept for later, anything else printed
    /// (ending with a newline if `newline`). Returns whether the cursor is at a line start.
    fn complete(&mut self, line: &str, newline: bool, out: &mut impl Write) -> bool {
        if self.color && self.code.is_none() && table::is_row(line) {
            // A table is a header row then a separator; anything else was ordinary text.
            if self.table.len() == 1 && !table::is_separator(line) {
                self.flush_table(out);
            }
            self.table.push(line.to_owned());
            return true;
        }
        self.flush_table(out);
        let prose = self.code.is_none() && !line.trim_start().starts_with("```");
        let mut styled = self.style_line(line);
        if newline {
            styled.push('\n');
        }
        self.emit(&styled, prose, out);
        newline
    }

    /// Prints the table being read, if any: laid out if it has its separator, else as text.
    fn flush_table(&mut self, out: &mut impl Write) {
        let rows = std::mem::take(&mut self.table);
        if let [only] = rows.as_slice() {
            let styled = self.style_line(only);
            self.emit(&format!("{styled}\n"), true, out);
        } else if !rows.is_empty() {
            for line in table::layout(&rows) {
                self.emit(&format!("{line}\n"), false, out);
            }
        }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color && !text.is_empty() {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    fn style_line(&mut self, line: &str) -> String {
        let t = line.trim_start();
        if let Some(info) = t.strip_prefix("```") {
            if self.code.take().is_none() {
                self.code = Some(CodeBlock::new(info));
            }
            return self.paint("2", line);
        }
        if let Some(block) = &mut self.code {
            return if self.color { block.line(line) } else { line.to_owned() };
        }
        if t.starts_with('#') {
            let text = t.trim_start_matches('#').trim();
            return self.paint("1;4", text);
        }
        if !self.color {
            return line.to_owned();
        }
        // A rule (`***`, `- - -`) is not emphasis or a list.
        if t.chars().all(|c| matches!(c, '*' | '-' | '_' | ' ')) {
            return line.to_owned();
        }
        let mut out = String::with_capacity(line.len() + 16);
        let mut body = line;
        let indent = &line[..line.len() - t.len()];
        if let Some(item) =
            t.strip_prefix("- ").or_else(|| t.strip_prefix("* ")).or_else(|| t.strip_prefix("+ "))
        {
            out.push_str(indent);
            out.push_str("\x1b[36m•\x1b[39m ");
            body = item;
        }
        let mut inline = Inline::default();
        inline.push(body, &mut out);
        inline.end(&mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::table::strip_ansi;
    use super::*;

    fn render(chunks: &[&str], color: bool) -> String {
        let mut r = Renderer::new(color);
        let mut out = Vec::new();
        for c in chunks {
            r.text(c, &mut out);
        }
        r.finish(&mut out);
        String::from_utf8(out).unwrap()
    }

    /// Renders `text` one character at a time: the hardest chunking.
    fn render_chars(text: &str, color: bool) -> String {
        let pieces: Vec<String> = text.chars().map(String::from).collect();
        let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
        render(&refs, color)
    }

    #[test]
    fn plain_text_streams_through_unchanged_whatever_the_chunking() {
        let text = "Hello, world.\nA second line with **bold**.\n- a list item\n";
        let whole = render(&[text], false);
        assert_eq!(whole, text);
        assert_eq!(render_chars(text, false), text);
    }

    #[test]
    fn headings_and_code_are_styled_once_complete() {
        let out = render(&["# Ti", "tle\n", "```rust\nfn main() { let x = \"s\"; // c\n```\n", "done"], true);
        assert!(out.contains("\x1b[1;4mTitle\x1b[0m\n"), "{out:?}");
        assert!(out.contains("\x1b[2m```rust\x1b[0m\n"), "{out:?}");
        assert!(out.ends_with("done\n"), "{out:?}");
        let plain = render(&["# Title\n", "```\ncode\n```\n"], false);
        assert_eq!(plain, "Title\n```\ncode\n```\n");
    }

    #[test]
    fn rust_block_is_highlighted_by_its_grammar() {
        let code = "fn main() {\n    let x = \"s\"; // c\n}\n";
        let out = render(&["```rust\n", code, "```\n"], true);
        assert_eq!(strip_ansi(&out), format!("```rust\n{code}```\n"), "the text survives");
        let lines: Vec<&str> = out.lines().collect();
        let first = lines[1];
        assert!(first.starts_with("\x1b[38;") && first.contains("mfn\x1b["), "`fn` coloured: {first:?}");
        // `let`, the string and the comment each get a colour of their own.
        let second = lines[2];
        assert!(second.matches("\x1b[38;").count() >= 3, "{second:?}");
        for line in &lines[1..4] {
            assert!(line.ends_with("\x1b[0m"), "a line ends reset: {line:?}");
        }
        assert!(out.ends_with("```\x1b[0m\n"), "{out:?}");
        // The highlighter's state is per block: a string left open does not colour the next.
        let out = render(&["```py\nx = \"\"\"open\n```\n```py\nplain\n```\n"], true);
        let plain = out.lines().nth(4).unwrap_or_default();
        assert_eq!(plain, "plain\x1b[0m", "{out:?}");
    }

    #[test]
    fn common_languages_get_colour() {
        let samples = [
            ("rust", "let x: u32 = 1;"),
            ("rs", "pub fn f() {}"),
            ("py", "def f(x): return 'a'"),
            ("python title=\"a.py\"", "import os"),
            ("ts", "const f = async (a, b) => a + b;"),
            ("tsx", "export function f(): void {}"),
            ("js", "let s = `t${x}`;"),
            ("sh", "echo \"$HOME\" | grep -v x"),
            ("bash", "if [ -f x ]; then echo y; fi"),
            ("console", "$ cargo test"),
            ("go", "func main() { fmt.Println(\"x\") }"),
            ("json", "{\"a\": [1, true]}"),
            ("yaml", "key: 'value'"),
            ("c", "int main(void) { return 0; }"),
            ("cpp", "std::vector<int> v{1};"),
            ("java", "public class A {}"),
            ("html", "<div class=\"a\">x</div>"),
            ("css", "a { color: red; }"),
            ("sql", "SELECT * FROM t WHERE a = 1;"),
            ("diff", "+added"),
            ("ruby", "def f; 'x'; end"),
            ("{.rust}", "fn f() {}"),
            ("RUST,ignore", "fn f() {}"),
        ];
        for (lang, line) in samples {
            let out = render(&[&format!("```{lang}\n{line}\n```\n")], true);
            let code = out.lines().nth(1).unwrap_or_default();
            assert!(code.contains("\x1b[38;"), "{lang}: {out:?}");
            assert_eq!(strip_ansi(code), line, "{lang}");
        }
    }

    #[test]
    fn unknown_language_falls_back_to_plain_text() {
        for fence in ["```nosuchlang", "```", "```   ", "```{}", "```.", "```é"] {
            let text = format!("{fence}\nhello <world> \"x\" é日本\n```\n");
            let out = render(&[&text], true);
            assert!(out.contains("\nhello <world> \"x\" é日本\n"), "{fence}: {out:?}");
        }
    }

    #[test]
    fn table_is_aligned_with_a_bold_header() {
        let text = "Sizes:\n| Name | Size | Note |\n|:-----|-----:|:---:|\n| a.rs | 1 | ok |\n\
                    | héllo wörld 日本 | 12345 | **big** |\nafter\n";
        let expected = "Sizes:\n\
                        Name             │  Size │ Note\n\
                        ─────────────────┼───────┼─────\n\
                        a.rs             │     1 │  ok\n\
                        héllo wörld 日本 │ 12345 │ big\n\
                        after\n";
        let out = render(&[text], true);
        assert_eq!(strip_ansi(&out), expected, "{out:?}");
        assert!(out.contains("\x1b[1mName"), "header bold: {out:?}");
        assert_eq!(render_chars(text, true), out, "chunking does not matter");
        for line in out.lines().filter(|l| l.contains('│')) {
            assert!(line.ends_with("\x1b[0m"), "{line:?}");
        }
    }

    #[test]
    fn table_cut_off_by_the_end_of_input_is_still_printed() {
        let out = render(&["| a | b |\n|---|---|\n| 1 | 22"], true);
        assert_eq!(strip_ansi(&out), "a │ b\n──┼───\n1 │ 22\n");
        // Complete rows and nothing after: printed by finish, which a tool call also triggers.
        let mut r = Renderer::new(true);
        let mut out = Vec::new();
        r.text("| a | b |\n|---|---|\n", &mut out);
        assert!(out.is_empty(), "held until the table ends");
        assert!(!r.at_line_start(), "so the caller finishes the table before printing elsewhere");
        r.finish(&mut out);
        assert_eq!(strip_ansi(&String::from_utf8(out).unwrap()), "a │ b\n──┼──\n");
        assert!(r.at_line_start());
    }

    #[test]
    fn rows_without_a_separator_or_with_extra_cells_lose_nothing() {
        let text = "| not | a table\n| x |\ntext\n";
        assert_eq!(strip_ansi(&render(&[text], true)), text);
        let out = render(&["| a |\n|---|\n| 1 | 2 | 3 |\n|\n"], true);
        assert_eq!(strip_ansi(&out), "a │   │ \n──┼───┼──\n1 │ 2 │ 3\n  │   │ \n");
        let out = render(&["```\n| a |\n|---|\n```\n"], true);
        assert_eq!(strip_ansi(&out), "```\n| a |\n|---|\n```\n", "not in code");
    }

    #[test]
    fn links_show_their_url() {
        let text = "See [the docs](https://x.y/a_(b)) and [https://x.y](https://x.y).\n";
        let out = render(&[text], true);
        assert_eq!(strip_ansi(&out), "See the docs (https://x.y/a_(b)) and https://x.y.\n");
        assert!(out.contains(" (\x1b[2;4mhttps://x.y/a_(b)\x1b[22;24m)"), "{out:?}");
        assert_eq!(render_chars(text, true), out, "chunking does not matter");
        let out = render(&["- **see [a](u) now** x\n"], true);
        assert_eq!(strip_ansi(&out), "• see a (u) now x\n");
        assert!(out.contains("\x1b[22;24m\x1b[1m) now\x1b[22m"), "bold goes on: {out:?}");
        for (text, want) in [
            ("- [x] done\n", "• [x] done\n"),
            ("![img](p.png)\n", "![img](p.png)\n"),
            ("a [b] c (d)\n", "a [b] c (d)\n"),
            ("[open(", "[open(\n"),
            ("[a](b c)\n", "[a](b c)\n"),
            ("`[c](d)`\n", "[c](d)\n"),
            ("[a [b](c)]\n", "[a b (c)]\n"),
            ("x[]\n", "x[]\n"),
        ] {
            assert_eq!(strip_ansi(&render(&[text], true)), want, "{text:?}");
        }
    }

    #[test]
    fn without_color_everything_passes_through_byte_for_byte() {
        let text = "Intro with [a link](https://e.x) and **bold**.\n\
                    | Name | Size |\n|---|--:|\n| é日本 | 1 |\n\
                    ```rust\nfn main() { let s = \"[x](y)\"; }\n```\n\
                    ```nosuchlang\n| not | table |\n```\n\
                    - item [t](u)\n| cut | off |\n|---|---|\n| 1";
        assert_eq!(render(&[text], false), format!("{text}\n"));
        assert_eq!(render_chars(text, false), format!("{text}\n"));
    }

    #[test]
    fn lists_bold_and_code_spans_are_styled_in_color_only() {
        let text =
            "Use **bold** and `cargo test`.\n- first\n  * nested **b**\n* **bold item** x\n2 * 3 = 6\n";
        let out = render(
            &[
                "Use **bo",
                "ld** and `car",
                "go test`.\n- fi",
                "rst\n  * nested **b**\n* **bold item** x\n2 * 3 = 6\n",
            ],
            true,
        );
        assert!(out.starts_with("Use \x1b[1mbold\x1b[22m and \x1b[36mcargo test\x1b[39m.\n"), "{out:?}");
        assert!(out.contains("\x1b[36m•\x1b[39m first\n"), "{out:?}");
        assert!(out.contains("  \x1b[36m•\x1b[39m nested \x1b[1mb\x1b[22m\n"), "{out:?}");
        assert!(
            out.contains("\n\x1b[36m•\x1b[39m \x1b[1mbold item\x1b[22m x\n"),
            "a bullet, then bold: {out:?}"
        );
        assert!(out.contains("2 * 3 = 6\n"), "a lone star stays: {out:?}");
        let out = render(&["2 *", "* 10 and a ** b\n***\n"], true);
        assert!(out.starts_with("2 ** 10 and a ** b\n***\n"), "not emphasis: {out:?}");
        assert_eq!(render(&[text], false), text, "no color: the Markdown is untouched");
        // An unclosed style is closed at the end of its line.
        let out = render(&["a **b\nc"], true);
        assert!(out.starts_with("a \x1b[1mb\x1b[0m\nc"), "{out:?}");
    }

    #[test]
    fn odd_input_never_panics() {
        let long = "x".repeat(20_000);
        let long_code = format!("```rust\nlet s = \"{long}\";\nfn f() {{}}\n");
        let long_row = format!("| {long} | é |\n|---|---|\n| 日本 |\n");
        let long_link = format!("[{long}]({long})\n[a]({long}\n");
        let cases = [
            "",
            "\n\n",
            "```",
            "# ",
            "\"unterminated",
            "é'ü\\",
            "123abc 4.5e6",
            "#\n```\n#",
            "```rust\nfn main() {\n    let s = \"open",
            "```py\n'''\n",
            "|",
            "|\n|",
            "|\n|-\n|",
            "| a |\n|:|\n",
            "| a |\n|---|\n| b | c | d | e |\n| \\| |\n",
            "  | indented |\n  |---|\n  | row |\n",
            "[",
            "[a](",
            "[a]",
            "**[a](b)",
            "`[a](b)",
            "é[日本](ü)",
            long_code.as_str(),
            long_row.as_str(),
            long_link.as_str(),
        ];
        for s in cases {
            for color in [true, false] {
                let out = render(&[s], color);
                assert_eq!(render_chars(s, color), out, "{s:?}");
                if !color {
                    assert!(!out.contains('\x1b'), "{s:?}");
                }
            }
        }
    }
}
