//! HTML to readable Markdown, and the small HTML helpers the search scrapers need.

use tl::{HTMLTag, Node, NodeHandle, Parser};

/// Decodes the HTML entities pages commonly use (named basics and numeric ones).
pub fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let end = rest[1..].find(|c: char| c == ';' || c.is_whitespace() || c == '&').map(|e| e + 1);
        let decoded = end.filter(|&e| rest.as_bytes().get(e) == Some(&b';')).and_then(|e| {
            let name = &rest[1..e];
            let ch = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" | "#39" => Some('\''),
                "nbsp" => Some(' '),
                "mdash" => Some('—'),
                "ndash" => Some('–'),
                "hellip" => Some('…'),
                "copy" => Some('©'),
                "rsquo" => Some('’'),
                "lsquo" => Some('‘'),
                "rdquo" => Some('”'),
                "ldquo" => Some('“'),
                _ => name
                    .strip_prefix("#x")
                    .or_else(|| name.strip_prefix("#X"))
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .or_else(|| name.strip_prefix('#').and_then(|d| d.parse().ok()))
                    .and_then(char::from_u32),
            };
            ch.map(|c| (c, e + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The value of attribute `name` on `tag`.
pub fn attr(tag: &HTMLTag<'_>, name: &str) -> Option<String> {
    tag.attributes().get(name).flatten().map(|b| decode_entities(&b.as_utf8_str()))
}

/// Whether `tag` has `class` among its classes.
pub fn has_class(tag: &HTMLTag<'_>, class: &str) -> bool {
    attr(tag, "class").is_some_and(|c| c.split_whitespace().any(|x| x == class))
}

/// The text inside a node, entities decoded and whitespace collapsed.
pub fn text_of(node: &Node<'_>, parser: &Parser<'_>) -> String {
    collapse(&decode_entities(&node.inner_text(parser)))
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A readable Markdown rendering of an HTML page, with its title.
pub fn to_markdown(html: &str, base_url: Option<&reqwest::Url>) -> (Option<String>, String) {
    let Ok(dom) = tl::parse(html, tl::ParserOptions::default()) else {
        return (None, collapse(html));
    };
    let parser = dom.parser();
    let mut w = Writer {
        out: String::new(),
        parser,
        base: base_url,
        list: Vec::new(),
        title: None,
        pre: 0,
        depth: 0,
    };
    for h in dom.children() {
        w.node(*h);
    }
    let text = tidy(&w.out);
    (w.title, text)
}

struct Writer<'p, 'a> {
    out: String,
    parser: &'p Parser<'a>,
    base: Option<&'p reqwest::Url>,
    /// Open lists: `None` for bullets, `Some(n)` for numbered with the next number.
    list: Vec<Option<usize>>,
    title: Option<String>,
    pre: usize,
    /// Nesting depth: pages with thousands of unclosed tags must not exhaust the stack.
    depth: usize,
}

/// Deeper than this, content is left out (with a marker) instead of recursing further.
const MAX_DEPTH: usize = 200;

impl Writer<'_, '_> {
    fn block(&mut self) {
        if !self.out.ends_with("\n\n") {
            if self.out.ends_with('\n') {
                self.out.push('\n');
            } else if !self.out.is_empty() {
                self.out.push_str("\n\n");
            }
        }
    }

    fn newline(&mut self) {
        if !self.out.ends_with('\n') && !self.out.is_empty() {
            self.out.push('\n');
        }
    }

    fn children(&mut self, tag: &HTMLTag<'_>) {
        let handles: Vec<NodeHandle> = tag.children().top().iter().copied().collect();
        for h in handles {
            self.node(h);
        }
    }

    fn inline(&mut self, tag: &HTMLTag<'_>, mark: &str) {
        let start = self.out.len();
        self.children(tag);
        let inner = self.out[start..].trim().to_owned();
        self.out.truncate(start);
        if !inner.is_empty() {
            self.out.push_str(&format!("{mark}{inner}{mark}"));
        }
    }

    fn space(&mut self) {
        if !self.out.is_empty() && !self.out.ends_with(|c: char| c.is_whitespace() || c == '(' || c == '[') {
            self.out.push(' ');
        }
    }

    fn url(&self, href: &str) -> String {
        match self.base.and_then(|b| b.join(href).ok()) {
            Some(u) => u.to_string(),
            None => href.to_owned(),
        }
    }

    fn node(&mut self, h: NodeHandle) {
        if self.depth >= MAX_DEPTH {
            if !self.out.ends_with("[…]") {
                self.out.push_str(" […]");
            }
            return;
        }
        self.depth += 1;
        self.node_inner(h);
        self.depth -= 1;
    }

    fn node_inner(&mut self, h: NodeHandle) {
        let Some(node) = h.get(self.parser) else { return };
        match node {
            Node::Raw(b) => {
                let raw = b.as_utf8_str();
                if self.pre > 0 {
                    self.out.push_str(&decode_entities(&raw));
                } else {
                    let t = collapse(&decode_entities(&raw));
                    if !t.is_empty() {
                        // Whitespace in the source separates words; none means they touch.
                        if raw.starts_with(char::is_whitespace) {
                            self.space();
                        }
                        self.out.push_str(&t);
                        if raw.ends_with(char::is_whitespace) {
                            self.out.push(' ');
                        }
                    }
                }
            }
            Node::Comment(_) => {}
            Node::Tag(tag) => self.tag(tag),
        }
    }

    fn tag(&mut self, tag: &HTMLTag<'_>) {
        let name = tag.name().as_utf8_str().to_ascii_lowercase();
        match name.as_str() {
            "script" | "style" | "noscript" | "svg" | "template" | "iframe" | "canvas" | "form"
            | "button" | "select" | "input" => {}
            "title" => self.title(tag),
            "head" => self.head(tag),
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => self.heading(tag, name[1..].parse().unwrap_or(1)),
            "p" | "div" | "section" | "article" | "main" | "header" | "footer" | "nav" | "aside"
            | "figure" | "figcaption" | "table" | "dl" | "address" | "details" | "summary" => {
                self.block();
                self.children(tag);
                self.block();
            }
            "br" => self.out.push('\n'),
            "hr" => {
                self.block();
                self.out.push_str("---");
                self.block();
            }
            "tr" => self.row(tag),
            "td" | "th" => self.cell(tag),
            "dt" => {
                self.newline();
                self.inline(tag, "**");
                self.newline();
            }
            "dd" => self.definition(tag),
            "ul" | "ol" => self.list(tag, name == "ol"),
            "li" => self.item(tag),
            "pre" => self.preformatted(tag),
            "code" if self.pre > 0 => self.children(tag),
            "code" | "kbd" | "samp" => self.inline(tag, "`"),
            "strong" | "b" => self.inline(tag, "**"),
            "em" | "i" => self.inline(tag, "*"),
            "blockquote" => self.quote(tag),
            "a" => self.link(tag),
            "img" => self.image(tag),
            _ => self.children(tag),
        }
    }

    /// The children of `tag` rendered on their own, whitespace collapsed, and taken back out.
    fn collapsed_children(&mut self, tag: &HTMLTag<'_>) -> String {
        let start = self.out.len();
        self.children(tag);
        let inner = collapse(&self.out[start..]);
        self.out.truncate(start);
        inner
    }

    fn title(&mut self, tag: &HTMLTag<'_>) {
        let t = collapse(&decode_entities(&tag.inner_text(self.parser)));
        if !t.is_empty() && self.title.is_none() {
            self.title = Some(t);
        }
    }

    fn head(&mut self, tag: &HTMLTag<'_>) {
        // Only the title matters in the head.
        let handles: Vec<NodeHandle> = tag.children().top().iter().copied().collect();
        for h in handles {
            if let Some(Node::Tag(t)) = h.get(self.parser) {
                if t.name().as_utf8_str().eq_ignore_ascii_case("title") {
                    self.title(t);
                }
            }
        }
    }

    fn heading(&mut self, tag: &HTMLTag<'_>, level: usize) {
        self.block();
        let inner = self.collapsed_children(tag);
        if !inner.is_empty() {
            self.out.push_str(&format!("{} {inner}", "#".repeat(level)));
        }
        self.block();
    }

    fn row(&mut self, tag: &HTMLTag<'_>) {
        self.newline();
        self.out.push('|');
        self.children(tag);
        self.newline();
    }

    fn cell(&mut self, tag: &HTMLTag<'_>) {
        self.out.push(' ');
        let inner = self.collapsed_children(tag);
        self.out.push_str(&format!("{inner} |"));
    }

    fn definition(&mut self, tag: &HTMLTag<'_>) {
        self.newline();
        self.out.push_str(": ");
        self.children(tag);
        self.newline();
    }

    fn list(&mut self, tag: &HTMLTag<'_>, numbered: bool) {
        self.newline();
        self.list.push(if numbered { Some(1) } else { None });
        self.children(tag);
        self.list.pop();
        if self.list.is_empty() {
            self.block();
        }
    }

    fn item(&mut self, tag: &HTMLTag<'_>) {
        self.newline();
        let depth = self.list.len().saturating_sub(1);
        let marker = match self.list.last_mut() {
            Some(Some(n)) => {
                let m = format!("{n}. ");
                *n += 1;
                m
            }
            _ => "- ".to_owned(),
        };
        self.out.push_str(&"  ".repeat(depth));
        self.out.push_str(&marker);
        self.children(tag);
        self.newline();
    }

    fn preformatted(&mut self, tag: &HTMLTag<'_>) {
        self.block();
        self.out.push_str("```\n");
        self.pre += 1;
        let start = self.out.len();
        self.children(tag);
        self.pre -= 1;
        if !self.out[start..].ends_with('\n') {
            self.out.push('\n');
        }
        self.out.push_str("```");
        self.block();
    }

    fn quote(&mut self, tag: &HTMLTag<'_>) {
        self.block();
        let start = self.out.len();
        self.children(tag);
        let inner = self.out.split_off(start);
        for line in inner.trim().lines() {
            self.out.push_str(&format!("> {line}\n"));
        }
        self.block();
    }

    fn link(&mut self, tag: &HTMLTag<'_>) {
        let href = attr(tag, "href").filter(|h| !h.starts_with("javascript:") && !h.starts_with('#'));
        let inner = self.collapsed_children(tag);
        if inner.is_empty() {
            return;
        }
        match href {
            Some(h) => self.out.push_str(&format!("[{inner}]({})", self.url(&h))),
            None => self.out.push_str(&inner),
        }
    }

    fn image(&mut self, tag: &HTMLTag<'_>) {
        if let Some(alt) = attr(tag, "alt").filter(|a| !a.trim().is_empty()) {
            let src = attr(tag, "src").map(|s| self.url(&s)).unwrap_or_default();
            self.out.push_str(&format!("![{}]({src})", collapse(&alt)));
        }
    }
}

/// Trims trailing spaces and squeezes runs of blank lines.
fn tidy(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut blank = 0;
    for line in s.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deeply_nested_or_unclosed_tags_do_not_overflow_the_stack() {
        let html = format!("<html><body>{}deep text</body></html>", "<div><li>".repeat(50_000));
        let (_, md) = std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(move || to_markdown(&html, None))
            .unwrap()
            .join()
            .unwrap();
        assert!(md.contains("[…]"));
    }

    #[test]
    fn entities_decode() {
        assert_eq!(
            decode_entities("a &amp; b &lt;c&gt; &#39;d&#x27; &copy; &unknown; &"),
            "a & b <c> 'd' © &unknown; &"
        );
    }

    #[test]
    fn a_page_becomes_readable_markdown() {
        let html = r#"<!doctype html><html><head><title>Octo &amp; friends</title><style>p{}</style>
            <script>alert(1)</script></head><body>
            <nav><a href="/home">Home</a></nav>
            <h1>Getting   started</h1>
            <p>Install <code>octo</code> with <strong>cargo</strong>. See <a href="docs/install.html">the guide</a>.</p>
            <ul><li>fast</li><li>safe<ol><li>one</li><li>two</li></ol></li></ul>
            <pre><code>cargo install octo
octo --help</code></pre>
            <blockquote>Quote here</blockquote>
            <table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>
            <img src="/logo.png" alt="Logo">
            </body></html>"#;
        let base = reqwest::Url::parse("https://example.com/start/").unwrap();
        let (title, md) = to_markdown(html, Some(&base));
        assert_eq!(title.as_deref(), Some("Octo & friends"));
        assert!(md.contains("# Getting started"), "{md}");
        assert!(md.contains("Install `octo` with **cargo**. See [the guide](https://example.com/start/docs/install.html)."), "{md}");
        assert!(md.contains("- fast\n- safe\n  1. one\n  2. two"), "{md}");
        assert!(md.contains("```\ncargo install octo\nocto --help\n```"), "{md}");
        assert!(md.contains("> Quote here"), "{md}");
        assert!(md.contains("| a | b |\n| 1 | 2 |"), "{md}");
        assert!(md.contains("![Logo](https://example.com/logo.png)"), "{md}");
        assert!(!md.contains("alert") && !md.contains("p{}"), "{md}");
    }
}
