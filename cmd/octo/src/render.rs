//! Rendering streamed Markdown for the terminal, line by line, without ever rewriting what is
//! already printed: ordinary lines stream as they arrive, with `**bold**` and `` `code` `` styled
//! on the fly; headings, list items and code lines are held until their newline and printed
//! styled (bullets for list markers, light syntax highlighting for code). Without color the
//! Markdown passes through unchanged.

use std::io::Write;

/// A streaming Markdown renderer.
#[derive(Debug, Default)]
pub struct Renderer {
    color: bool,
    in_code: bool,
    lang: String,
    /// The current line, when it is being held for styling.
    held: String,
    /// The current line is streaming raw (decided at its first character).
    raw_line: bool,
    /// Nothing of the current line has been seen yet.
    at_line_start: bool,
    /// Inline styles open on the current line.
    inline: Inline,
}

/// Inline Markdown state of a streaming line.
#[derive(Debug, Default, Clone, Copy)]
struct Inline {
    bold: bool,
    code: bool,
    /// Stars seen and not yet decided on (0, 1 or 2): `**` opens bold only before a non-space
    /// and closes it only after one, so `2 ** 10` stays as it is.
    stars: u8,
    /// The last character printed was whitespace (or nothing was printed yet).
    after_space: bool,
}

impl Inline {
    /// Appends `text` to `out` with `**` and backticks turned into styles.
    fn push(&mut self, text: &str, out: &mut String) {
        for c in text.chars() {
            if self.stars == 1 && c == '*' {
                self.stars = 2;
                continue;
            }
            self.settle(Some(c), out);
            match c {
                '`' => {
                    self.code = !self.code;
                    out.push_str(if self.code { "\x1b[36m" } else { "\x1b[39m" });
                }
                '*' if !self.code => self.stars = 1,
                '\n' => {
                    self.end(out);
                    out.push('\n');
                }
                _ => {
                    out.push(c);
                    self.after_space = c.is_whitespace();
                }
            }
        }
    }

    /// Decides what pending stars were, now that `next` follows them (`None`: the line ended).
    fn settle(&mut self, next: Option<char>, out: &mut String) {
        match std::mem::take(&mut self.stars) {
            1 => {
                out.push('*');
                self.after_space = false;
            }
            2 if self.bold && !self.after_space => {
                self.bold = false;
                out.push_str("\x1b[22m");
            }
            2 if !self.bold && next.is_some_and(|n| !n.is_whitespace()) => {
                self.bold = true;
                out.push_str("\x1b[1m");
            }
            2 => {
                out.push_str("**");
                self.after_space = false;
            }
            _ => {}
        }
    }

    /// Closes whatever is open (styles never leak past a line).
    fn end(&mut self, out: &mut String) {
        self.settle(None, out);
        if self.bold || self.code {
            out.push_str("\x1b[0m");
        }
        *self = Self { after_space: true, ..Self::default() };
    }
}

impl Renderer {
    /// A renderer; `color` enables ANSI styles.
    pub fn new(color: bool) -> Self {
        Self {
            color,
            at_line_start: true,
            inline: Inline { after_space: true, ..Inline::default() },
            ..Self::default()
        }
    }

    /// Whether the cursor is at the start of a line.
    pub fn at_line_start(&self) -> bool {
        self.at_line_start && self.held.is_empty()
    }

    /// Renders a piece of streamed text.
    pub fn text(&mut self, delta: &str, out: &mut impl Write) {
        for seg in delta.split_inclusive('\n') {
            if self.at_line_start {
                self.at_line_start = false;
                let t = seg.trim_start();
                self.raw_line = !(self.in_code
                    || t.starts_with('#')
                    || t.starts_with("```")
                    || self.color && t.starts_with(['-', '*', '+'])
                    || t.is_empty() && !seg.ends_with('\n'));
            }
            if self.raw_line && self.color {
                let mut styled = String::with_capacity(seg.len() + 8);
                self.inline.push(seg, &mut styled);
                let _ = out.write_all(styled.as_bytes());
            } else if self.raw_line {
                let _ = out.write_all(seg.as_bytes());
            } else {
                self.held.push_str(seg);
            }
            if seg.ends_with('\n') {
                if !self.raw_line {
                    let line = std::mem::take(&mut self.held);
                    let styled = self.style_line(line.trim_end_matches('\n'));
                    let _ = writeln!(out, "{styled}");
                }
                self.at_line_start = true;
                self.raw_line = false;
            }
        }
        let _ = out.flush();
    }

    /// Prints a held partial line at the end of a response.
    pub fn finish(&mut self, out: &mut impl Write) {
        let mut tail = String::new();
        self.inline.end(&mut tail);
        let _ = out.write_all(tail.as_bytes());
        if !self.held.is_empty() {
            let line = std::mem::take(&mut self.held);
            let styled = self.style_line(&line);
            let _ = write!(out, "{styled}");
        }
        if !self.at_line_start {
            let _ = writeln!(out);
        }
        self.at_line_start = true;
        self.raw_line = false;
        self.in_code = false;
        let _ = out.flush();
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
        if let Some(rest) = t.strip_prefix("```") {
            self.in_code = !self.in_code;
            if self.in_code {
                self.lang = rest.trim().to_ascii_lowercase();
            }
            return self.paint("2", line);
        }
        if self.in_code {
            return highlight(line, &self.lang, self.color);
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
        let mut inline = Inline { after_space: true, ..Inline::default() };
        inline.push(body, &mut out);
        inline.end(&mut out);
        out
    }
}

const KEYWORDS: &[&str] = &[
    "fn",
    "let",
    "mut",
    "pub",
    "use",
    "mod",
    "struct",
    "enum",
    "impl",
    "trait",
    "match",
    "if",
    "else",
    "for",
    "while",
    "loop",
    "return",
    "async",
    "await",
    "const",
    "static",
    "type",
    "where",
    "self",
    "Self",
    "crate",
    "def",
    "class",
    "import",
    "from",
    "as",
    "in",
    "not",
    "and",
    "or",
    "pass",
    "with",
    "yield",
    "lambda",
    "None",
    "True",
    "False",
    "function",
    "var",
    "new",
    "this",
    "export",
    "interface",
    "package",
    "func",
    "go",
    "defer",
    "true",
    "false",
    "null",
    "nil",
    "break",
    "continue",
    "case",
    "switch",
    "default",
    "try",
    "catch",
    "throw",
    "public",
    "private",
    "protected",
    "void",
    "int",
    "echo",
    "then",
    "fi",
    "do",
    "done",
    "elif",
];

/// Light syntax highlighting that suits most languages: strings, comments, numbers, keywords.
pub fn highlight(line: &str, lang: &str, color: bool) -> String {
    if !color {
        return line.to_owned();
    }
    let hash_comments = matches!(
        lang,
        "python" | "py" | "sh" | "bash" | "shell" | "zsh" | "toml" | "yaml" | "yml" | "ruby" | "rb"
    );
    // Very long lines (minified code, base64) are shown plain: highlighting them buys nothing.
    if line.len() > 2_000 {
        return line.to_owned();
    }
    let mut out = String::with_capacity(line.len() + 16);
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let rest = &chars[i..];
        if rest.starts_with(&['/', '/'])
            || (hash_comments && c == '#')
            || rest.starts_with(&['-', '-', ' ']) && lang == "sql"
        {
            let rest: String = rest.iter().collect();
            out.push_str(&format!("\x1b[2m{rest}\x1b[0m"));
            break;
        }
        if c == '"' || c == '\'' || c == '`' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != c {
                if chars[j] == '\\' {
                    j += 1;
                }
                j += 1;
            }
            let end = (j + 1).min(chars.len());
            let s: String = chars[i..end].iter().collect();
            out.push_str(&format!("\x1b[32m{s}\x1b[0m"));
            i = end;
            continue;
        }
        if c.is_ascii_digit() && (i == 0 || !chars[i - 1].is_alphanumeric() && chars[i - 1] != '_') {
            let mut j = i;
            while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '.' || chars[j] == '_')
            {
                j += 1;
            }
            let s: String = chars[i..j].iter().collect();
            out.push_str(&format!("\x1b[33m{s}\x1b[0m"));
            i = j;
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            let mut j = i;
            while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_') {
                j += 1;
            }
            let w: String = chars[i..j].iter().collect();
            if KEYWORDS.contains(&w.as_str()) {
                out.push_str(&format!("\x1b[35m{w}\x1b[0m"));
            } else {
                out.push_str(&w);
            }
            i = j;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn plain_text_streams_through_unchanged_whatever_the_chunking() {
        let text = "Hello, world.\nA second line with **bold**.\n- a list item\n";
        let whole = render(&[text], false);
        assert_eq!(whole, text);
        let pieces: Vec<String> = text.chars().map(String::from).collect();
        let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
        assert_eq!(render(&refs, false), text);
    }

    #[test]
    fn headings_and_code_are_styled_once_complete() {
        let out = render(&["# Ti", "tle\n", "```rust\nfn main() { let x = \"s\"; // c\n```\n", "done"], true);
        assert!(out.contains("\x1b[1;4mTitle\x1b[0m\n"), "{out:?}");
        assert!(out.contains("\x1b[35mfn\x1b[0m main"), "{out:?}");
        assert!(out.contains("\x1b[32m\"s\"\x1b[0m"), "{out:?}");
        assert!(out.contains("\x1b[2m// c\x1b[0m"), "{out:?}");
        assert!(out.ends_with("done\n"), "{out:?}");
        let plain = render(&["# Title\n", "```\ncode\n```\n"], false);
        assert_eq!(plain, "Title\n```\ncode\n```\n");
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
        for s in ["", "\n\n", "```", "# ", "\"unterminated", "é'ü\\", "123abc 4.5e6", "#\n```\n#"] {
            let _ = render(&[s], true);
            let _ = highlight(s, "python", true);
        }
    }
}
