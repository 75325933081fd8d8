//! Inline Markdown in a line that may still be streaming: `**bold**`, `` `code` `` and
//! `[text](url)` links, styled as the characters arrive. A `[` that may open a link is held back
//! until the link is complete or clearly is not one, then printed either way.

/// Bytes of link text or URL held back before `[` is taken to be just a bracket.
const MAX_LINK: usize = 2_000;

/// A link being read.
#[derive(Debug, Default, Clone)]
enum Link {
    #[default]
    None,
    /// After `[`: the text so far.
    Text(String),
    /// After `[text]`: a `(` must follow.
    Closed(String),
    /// After `[text](`: the URL so far, and the parentheses open inside it (`a_(b)`).
    Url { text: String, url: String, depth: u32 },
}

impl Link {
    /// The Markdown held back, to print as it is when it turns out not to be a link.
    fn literal(&self) -> String {
        match self {
            Self::None => String::new(),
            Self::Text(text) => format!("[{text}"),
            Self::Closed(text) => format!("[{text}]"),
            Self::Url { text, url, .. } => format!("[{text}]({url}"),
        }
    }
}

/// Inline Markdown state of a streaming line.
#[derive(Debug, Clone)]
pub(super) struct Inline {
    bold: bool,
    code: bool,
    /// Stars seen and not yet decided on (0, 1 or 2): `**` opens bold only before a non-space
    /// and closes it only after one, so `2 ** 10` stays as it is.
    stars: u8,
    /// The last character printed was whitespace (or nothing was printed yet).
    after_space: bool,
    /// The last character seen (`![alt](src)` is an image, not a link).
    prev: char,
    link: Link,
    /// The whole line is bold (a table header): closing a style must not end that.
    base_bold: bool,
}

impl Default for Inline {
    fn default() -> Self {
        Self::new(false)
    }
}

impl Inline {
    /// A fresh state; `base_bold` when the text around it is bold.
    pub(super) fn new(base_bold: bool) -> Self {
        Self { bold: false, code: false, stars: 0, after_space: true, prev: ' ', link: Link::None, base_bold }
    }

    /// Appends `text` to `out` with `**`, backticks and links turned into styles.
    pub(super) fn push(&mut self, text: &str, out: &mut String) {
        for c in text.chars() {
            self.char(c, out);
        }
    }

    fn char(&mut self, c: char, out: &mut String) {
        if matches!(self.link, Link::None) {
            self.plain(c, true, out);
        } else {
            self.link_char(c, out);
        }
    }

    /// Handles `c` outside a link; `links` says whether `[` may open one.
    fn plain(&mut self, c: char, links: bool, out: &mut String) {
        if self.stars == 1 && c == '*' {
            self.stars = 2;
            return;
        }
        let after_bang = std::mem::replace(&mut self.prev, c) == '!';
        self.settle(Some(c), out);
        match c {
            '`' => {
                self.code = !self.code;
                out.push_str(if self.code { "\x1b[36m" } else { "\x1b[39m" });
            }
            '*' if !self.code => self.stars = 1,
            '[' if links && !self.code && !after_bang => self.link = Link::Text(String::new()),
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

    /// Handles `c` while a link is being read.
    fn link_char(&mut self, c: char, out: &mut String) {
        let link = std::mem::take(&mut self.link);
        let next = match link {
            Link::Text(text) if c == ']' => Link::Closed(text),
            Link::Text(mut text) if c != '[' && c != '\n' && text.len() < MAX_LINK => {
                text.push(c);
                Link::Text(text)
            }
            Link::Closed(text) if c == '(' => Link::Url { text, url: String::new(), depth: 0 },
            Link::Url { text, url, depth: 0 } if c == ')' => {
                self.emit_link(&text, &url, out);
                return;
            }
            Link::Url { text, mut url, depth } if !c.is_whitespace() && url.len() < MAX_LINK => {
                let depth = match c {
                    '(' => depth.saturating_add(1),
                    ')' => depth.saturating_sub(1),
                    _ => depth,
                };
                url.push(c);
                Link::Url { text, url, depth }
            }
            other => {
                // Not a link after all: what was held back is printed as it came, then `c`.
                self.replay(&other.literal(), out);
                self.plain(c, true, out);
                return;
            }
        };
        self.link = next;
    }

    /// Prints held-back text as ordinary text, with no link in it.
    fn replay(&mut self, text: &str, out: &mut String) {
        for c in text.chars() {
            self.plain(c, false, out);
        }
    }

    /// Prints a complete link as `text (url)`, or the URL alone when it is its own text.
    fn emit_link(&mut self, text: &str, url: &str, out: &mut String) {
        if !text.is_empty() && text != url {
            self.replay(text, out);
            self.settle(Some(' '), out);
            out.push_str(" (");
        }
        out.push_str("\x1b[2;4m");
        out.push_str(url);
        out.push_str("\x1b[22;24m");
        if self.bold || self.base_bold {
            out.push_str("\x1b[1m");
        }
        if !text.is_empty() && text != url {
            out.push(')');
        }
        self.after_space = false;
        self.prev = ')';
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
                out.push_str(if self.base_bold { "\x1b[22;1m" } else { "\x1b[22m" });
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

    /// Prints what is held back and closes whatever is open (styles never leak past a line).
    pub(super) fn end(&mut self, out: &mut String) {
        let held = std::mem::take(&mut self.link).literal();
        self.replay(&held, out);
        self.settle(None, out);
        if self.bold || self.code {
            out.push_str("\x1b[0m");
        }
        *self = Self::new(self.base_bold);
    }
}
