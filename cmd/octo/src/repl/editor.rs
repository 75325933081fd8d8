//! The line editor: prompt, slash-command and `@path` completion, mention expansion.

use crate::out;
use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;
use rustyline::{Context, Editor, Helper};
use std::path::PathBuf;

/// The prompt: `octo> `, with the permission mode in front when it is not the default one
/// (`[plan] octo> `), so a mode that changes what runs is always in sight.
pub(super) fn prompt(mode: octo_app::Mode) -> String {
    if mode == octo_app::Mode::Default {
        "octo> ".to_owned()
    } else {
        format!("[{mode}] octo> ")
    }
}
pub(super) const MORE: &str = "   .. ";

pub(super) struct OctoHelper {
    pub workspace: PathBuf,
    /// Set by Ctrl-O on an empty line: the line read stands for `/expand`.
    pub expand: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Skills and custom commands the user may run, with a leading `/`.
    pub extra: Vec<String>,
    /// The status line drawn under the input at the main prompt.
    pub status: std::sync::Arc<super::status::Shown>,
}

impl Completer for OctoHelper {
    type Candidate = Pair;

    fn complete(&self, line: &str, pos: usize, _ctx: &Context<'_>) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = &line[..pos];
        if before.starts_with('/') && !before.contains(' ') {
            // A user's command may share a built-in's name (their `/review`): offered once.
            let names: std::collections::BTreeSet<String> = super::vocabulary::names()
                .map(str::to_owned)
                .chain(self.extra.iter().cloned())
                .filter(|name| name.starts_with(before))
                .collect();
            let c = names
                .into_iter()
                .map(|name| Pair { replacement: format!("{name} "), display: name })
                .collect();
            return Ok((0, c));
        }
        // The byte after the last whitespace character (which may be several bytes long).
        let start =
            before.char_indices().rev().find(|(_, c)| c.is_whitespace()).map_or(0, |(i, c)| i + c.len_utf8());
        let word = &before[start..];
        let Some(partial) = word.strip_prefix('@') else { return Ok((pos, Vec::new())) };
        let (dir, name) = match partial.rfind('/') {
            Some(i) => (&partial[..=i], &partial[i + 1..]),
            None => ("", partial),
        };
        let mut out = Vec::new();
        if let Ok(entries) = std::fs::read_dir(self.workspace.join(dir)) {
            for e in entries.flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                if n.starts_with(name) && !n.starts_with('.') {
                    let slash = if e.file_type().is_ok_and(|t| t.is_dir()) { "/" } else { "" };
                    out.push(Pair {
                        display: format!("{n}{slash}"),
                        replacement: format!("@{dir}{n}{slash}"),
                    });
                }
            }
        }
        out.sort_by(|a, b| a.display.cmp(&b.display));
        Ok((start, out))
    }
}

impl Hinter for OctoHelper {
    type Hint = String;

    /// The status line, on the row under the input (drawn only with the cursor at the end, so
    /// the editor's layout stays simple).
    fn hint(&self, line: &str, pos: usize, _ctx: &Context<'_>) -> Option<String> {
        (pos == line.len()).then(|| self.status.line()).flatten().map(|s| format!("\n{s}"))
    }
}

impl Highlighter for OctoHelper {
    fn highlight_hint<'h>(&self, hint: &'h str) -> std::borrow::Cow<'h, str> {
        if std::env::var_os("NO_COLOR").is_some() {
            std::borrow::Cow::Borrowed(hint)
        } else {
            std::borrow::Cow::Owned(format!("\x1b[2m{hint}\x1b[0m"))
        }
    }
}
impl Validator for OctoHelper {}
impl Helper for OctoHelper {}

pub(super) type Ed = Editor<OctoHelper, DefaultHistory>;

/// Ctrl-V: pastes the clipboard — an image is saved (privately, in octo's output folder) and
/// mentioned as `@path`, so it is attached; text is inserted. Without a clipboard program the
/// key keeps its usual meaning.
pub(super) struct Paste {
    pub dir: PathBuf,
}

impl rustyline::ConditionalEventHandler for Paste {
    fn handle(
        &self,
        _evt: &rustyline::Event,
        _n: rustyline::RepeatCount,
        _positive: bool,
        _ctx: &rustyline::EventContext<'_>,
    ) -> Option<rustyline::Cmd> {
        match octo_app::clipboard::read()? {
            octo_app::clipboard::Clip::Text(t) => Some(rustyline::Cmd::Insert(1, t)),
            octo_app::clipboard::Clip::Image(png) => {
                let stamp = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_millis())
                    .unwrap_or(0);
                let path = self.dir.join(format!("clipboard-{stamp}.png"));
                octo_app::session_store::private::create_dir(&self.dir).ok()?;
                let mut f = octo_app::session_store::private::create_new(&path).ok()?;
                std::io::Write::write_all(&mut f, &png).ok()?;
                Some(rustyline::Cmd::Insert(1, format!("@{} ", path.display())))
            }
        }
    }
}

/// Ctrl-O on an empty line: shows the last tool output whole (`/expand`); elsewhere the key
/// keeps its usual meaning.
pub(super) struct ExpandKey(pub std::sync::Arc<std::sync::atomic::AtomicBool>);

impl rustyline::ConditionalEventHandler for ExpandKey {
    fn handle(
        &self,
        _evt: &rustyline::Event,
        _n: rustyline::RepeatCount,
        _positive: bool,
        ctx: &rustyline::EventContext<'_>,
    ) -> Option<rustyline::Cmd> {
        if !ctx.line().is_empty() {
            return None;
        }
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        Some(rustyline::Cmd::AcceptLine)
    }
}

/// Reads a line on a blocking thread (the editor moves there and back).
pub(super) async fn read_line(
    mut ed: Ed,
    prompt: impl AsRef<str> + Send + 'static,
) -> (Ed, Result<String, ReadlineError>) {
    match tokio::task::spawn_blocking(move || {
        let r = ed.readline(prompt.as_ref());
        (ed, r)
    })
    .await
    {
        Ok(pair) => pair,
        Err(e) => {
            // The blocking task itself failed: nothing sensible remains but to stop.
            out::error(&format!("the line editor failed: {e}"));
            std::process::exit(1)
        }
    }
}

/// Reads a line with `initial` already typed (for editing a command before it runs).
pub(super) async fn read_line_with(
    mut ed: Ed,
    prompt: &'static str,
    initial: String,
) -> (Ed, Result<String, ReadlineError>) {
    match tokio::task::spawn_blocking(move || {
        let r = ed.readline_with_initial(prompt, (&initial, ""));
        (ed, r)
    })
    .await
    {
        Ok(pair) => pair,
        Err(e) => {
            out::error(&format!("the line editor failed: {e}"));
            std::process::exit(1)
        }
    }
}

/// The message for `line`: `@path` mentions of text files have their content attached after
/// the message; mentions of images (PNG, JPEG, GIF, WebP, by their bytes) become image blocks,
/// downscaled when too large. `images` false (a model that takes none) leaves them out, saying so.
pub(super) fn expand_mentions(line: &str, workspace: &std::path::Path, images: bool) -> octo_app::Message {
    let mut attached = String::new();
    let mut blocks = Vec::new();
    for word in line.split_whitespace() {
        let Some(path) = word.strip_prefix('@').filter(|p| !p.is_empty()) else { continue };
        let full = workspace.join(path);
        let Ok(meta) = std::fs::metadata(&full) else {
            // `@name` may be a handle or a decorator; one that looks like a path is a typo.
            if path.contains(['.', '/']) {
                out::status(&format!(
                    "octo: warning: @{} is not a file in {}: sent as written, nothing attached",
                    crate::sanitize::visible(path),
                    workspace.display()
                ));
            }
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let looks_image = {
            let lower = path.to_ascii_lowercase();
            [".png", ".jpg", ".jpeg", ".gif", ".webp"].iter().any(|e| lower.ends_with(e))
        };
        let shown = crate::sanitize::visible(path);
        if (looks_image || meta.len() > 2 * 1024 * 1024) && meta.len() > octo_app::image::MAX_INPUT as u64 {
            out::status(&format!(
                "octo: could not attach {shown}: it is {} MB, more than the {} MB an attached file may be",
                meta.len() / (1024 * 1024),
                octo_app::image::MAX_INPUT / (1024 * 1024)
            ));
            continue;
        }
        let bytes = match std::fs::read(&full) {
            Ok(b) => b,
            Err(e) => {
                out::status(&format!("octo: could not attach {shown}: {e}"));
                continue;
            }
        };
        match octo_app::image::prepare(&bytes) {
            Ok(img) if images => {
                if let Some(n) = &img.note {
                    out::status(&format!("octo: attached {shown} ({n})"));
                }
                blocks.push(octo_app::ContentBlock::Image { source: img.source() });
            }
            Ok(_) => out::status(&format!(
                "octo: {shown} was not attached: this model does not take images (switch with /model)"
            )),
            Err(e) if looks_image => out::status(&format!("octo: could not attach {shown}: {e}")),
            Err(_) => match String::from_utf8(bytes) {
                Ok(text) => {
                    let text: String = text.chars().take(100_000).collect();
                    attached.push_str(&format!("\n\n<file path=\"{path}\">\n{text}\n</file>"));
                }
                Err(_) => out::status(&format!("octo: could not attach {shown}: it is a binary file")),
            },
        }
    }
    let mut content = vec![octo_app::ContentBlock::text(format!("{line}{attached}"))];
    content.extend(blocks);
    octo_app::Message { role: octo_app::Role::User, content }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_handles_multibyte_spaces_and_paths() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("src")).unwrap();
        std::fs::write(tmp.path().join("src/main.rs"), "").unwrap();
        let h = OctoHelper {
            workspace: tmp.path().to_path_buf(),
            extra: vec!["/review".into()],
            expand: std::sync::Arc::default(),
            status: std::sync::Arc::default(),
        };
        let history = DefaultHistory::new();
        let ctx = Context::new(&history);
        let line = "fix\u{3000}@sr";
        let (start, c) = h.complete(line, line.len(), &ctx).unwrap();
        assert_eq!(&line[start..], "@sr");
        assert_eq!(c[0].replacement, "@src/");
        let line = "look at\u{a0}@src/ma";
        let (_, c) = h.complete(line, line.len(), &ctx).unwrap();
        assert_eq!(c[0].replacement, "@src/main.rs");
        let (_, c) = h.complete("/he", 3, &ctx).unwrap();
        assert_eq!(c[0].replacement, "/help ");
        let (_, c) = h.complete("/rev", 4, &ctx).unwrap();
        assert_eq!(c.iter().map(|p| p.replacement.as_str()).collect::<Vec<_>>(), ["/review "]);
    }
}
