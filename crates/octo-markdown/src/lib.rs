//! # octo-markdown
//!
//! A model's answer made readable: as HTML a browser can show safely, and (in [`terminal`]) as
//! styled lines for a terminal, both from one parse by `pulldown-cmark`.
//!
//! For the web: The Markdown is parsed once, by
//! `pulldown-cmark` (CommonMark with GitHub's tables, task lists, strikethrough and footnotes);
//! fenced code is highlighted by `syntect`'s grammars as classed spans (the colours come from
//! [`theme_css`], one sheet per light and dark theme); the HTML is then cleaned by `ammonia`.
//!
//! The answer is untrusted input, so nothing in it becomes markup of its own: raw HTML is shown
//! as text, a link keeps only an `http`, `https` or `mailto` address (and opens in a new tab
//! without the page's context), an image is a link to its address rather than something the
//! browser fetches by itself (a fetched image could carry data out in its URL), and a task-list
//! box is a character, not a form field. An answer longer than [`MAX_SOURCE`] is cut with a note,
//! and code longer than the highlighter's limits is shown plain.
//!
//! **Layer:** plumbing. Depends on no other octo crate.

mod code;
mod render;
pub mod terminal;

pub use code::theme_css;
pub use render::{to_html, MAX_SOURCE};
