//! Markdown to clean HTML: the parser's events adjusted (raw HTML as text, images as links,
//! task boxes as characters, code highlighted), written out, then sanitised.

use crate::code::{escape, highlight};
use pulldown_cmark::{CodeBlockKind, CowStr, Event, Options, Parser, Tag, TagEnd};
use std::collections::HashSet;
use std::sync::OnceLock;

/// The most of an answer rendered (bytes); the rest is left out with a note saying how much.
pub const MAX_SOURCE: usize = 1 << 20;

pub(crate) fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_GFM
}

/// `markdown` as sanitised HTML.
pub fn to_html(markdown: &str) -> String {
    let (src, cut) = cap(markdown);
    let mut html = String::with_capacity(src.len() * 3 / 2 + 64);
    pulldown_cmark::html::push_html(&mut html, Adjust::new(Parser::new_ext(src, options())));
    if cut > 0 {
        html.push_str(&format!("<p><em>… {} more not shown</em></p>", human(cut)));
    }
    cleaner().clean(&html).to_string()
}

/// The first [`MAX_SOURCE`] bytes (at a character boundary) and how many bytes were left out.
fn cap(s: &str) -> (&str, usize) {
    if s.len() <= MAX_SOURCE {
        return (s, 0);
    }
    let mut end = MAX_SOURCE;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    (&s[..end], s.len() - end)
}

fn human(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MB", bytes as f64 / f64::from(1u32 << 20))
    } else {
        format!("{} KB", bytes.div_ceil(1024))
    }
}

/// The sanitiser: the tags Markdown makes, classes only on code and its spans, links to the web
/// or mail only, opened apart from the page.
fn cleaner() -> &'static ammonia::Builder<'static> {
    static CLEANER: OnceLock<ammonia::Builder<'static>> = OnceLock::new();
    CLEANER.get_or_init(|| {
        let mut b = ammonia::Builder::default();
        b.add_tag_attributes("span", &["class"])
            .add_tag_attributes("code", &["class"])
            .add_tag_attributes("pre", &["class"])
            .rm_tags(&["img"])
            .url_schemes(HashSet::from(["http", "https", "mailto"]))
            .url_relative(ammonia::UrlRelative::Deny)
            .link_rel(Some("noopener noreferrer nofollow"))
            .set_tag_attribute_value("a", "target", "_blank");
        b
    })
}

/// The parser's events, adjusted for a page that must stay inert.
struct Adjust<I> {
    inner: I,
    /// A fenced or indented code block being collected: its language and text.
    code: Option<(String, String)>,
}

impl<I> Adjust<I> {
    fn new(inner: I) -> Self {
        Self { inner, code: None }
    }
}

impl<'a, I: Iterator<Item = Event<'a>>> Iterator for Adjust<I> {
    type Item = Event<'a>;

    fn next(&mut self) -> Option<Event<'a>> {
        loop {
            let event = self.inner.next();
            if let Some((_, text)) = &mut self.code {
                match event {
                    Some(Event::Text(t)) => {
                        text.push_str(&t);
                        continue;
                    }
                    Some(Event::End(TagEnd::CodeBlock)) | None => {
                        let (lang, text) = self.code.take().unwrap_or_default();
                        return Some(Event::Html(code_block(&lang, &text).into()));
                    }
                    Some(_) => continue,
                }
            }
            return Some(match event? {
                Event::Start(Tag::CodeBlock(kind)) => {
                    let lang = match kind {
                        CodeBlockKind::Fenced(info) => {
                            info.split_whitespace().next().unwrap_or("").to_owned()
                        }
                        CodeBlockKind::Indented => String::new(),
                    };
                    self.code = Some((lang, String::new()));
                    continue;
                }
                Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
                Event::Start(Tag::Image { dest_url, title, id, .. }) => Event::Start(Tag::Link {
                    link_type: pulldown_cmark::LinkType::Inline,
                    dest_url,
                    title,
                    id,
                }),
                Event::End(TagEnd::Image) => Event::End(TagEnd::Link),
                Event::TaskListMarker(done) => {
                    Event::Text(CowStr::Borrowed(if done { "☑ " } else { "☐ " }))
                }
                other => other,
            });
        }
    }
}

/// A code block's HTML: its language as a class (for the copy button's label), its text
/// highlighted.
fn code_block(lang: &str, text: &str) -> String {
    let class: String =
        lang.chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+')).collect();
    let attr =
        if class.is_empty() { String::new() } else { format!(" class=\"language-{}\"", escape(&class)) };
    format!("<pre><code{attr}>{}</code></pre>\n", highlight(text, lang))
}

#[cfg(test)]
mod tests;
