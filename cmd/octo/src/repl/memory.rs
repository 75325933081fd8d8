//! `/remember`, `/memory [query|edit|--here]` and `/dream` in the REPL.

use super::editor::{read_line, Ed};
use crate::out;
use crate::sanitize::visible;
use octo_app::Session;

/// `/remember TEXT`.
pub(super) fn remember(session: &Session, text: &str) {
    match session.remember(text) {
        Ok(line) => out::status(&visible(&format!("remembered in this workspace's Scratch Notes: {line}"))),
        Err(e) => out::error(&visible(&e.to_string())),
    }
}

/// `/memory`, `/memory QUERY`, `/memory edit`, `/memory --here`.
pub(super) fn memory(session: &Session, arg: &str) {
    let Some(memory) = session.memory() else {
        out::error("this session has no memory");
        return;
    };
    match arg {
        "" => {
            for store in [&memory.user, &memory.workspace] {
                let path = store.index_path();
                match store.index() {
                    Some(text) => {
                        out::status(&visible(&format!("{} memory ({}):", store.label(), path.display())));
                        for line in text.lines() {
                            out::status(&visible(&format!("  {line}")));
                        }
                    }
                    None => out::status(&visible(&format!(
                        "{} memory: empty ({})",
                        store.label(),
                        path.display()
                    ))),
                }
            }
            out::status("(/remember TEXT jots a note, /memory QUERY searches, /memory edit opens the index, /dream tidies it)");
        }
        "edit" => {
            let path = memory.workspace.index_path();
            if !path.exists() {
                if let Err(e) = std::fs::create_dir_all(memory.workspace.dir())
                    .and_then(|()| std::fs::write(&path, octo_app::memory_files::index::empty()))
                {
                    out::error(&format!("cannot create {}: {e}", path.display()));
                    return;
                }
            }
            let editor = std::env::var("VISUAL")
                .ok()
                .or_else(|| std::env::var("EDITOR").ok())
                .filter(|e| !e.trim().is_empty())
                .unwrap_or_else(|| "vi".to_owned());
            let mut words = editor.split_whitespace();
            let program = words.next().unwrap_or("vi");
            match std::process::Command::new(program).args(words).arg(&path).status() {
                Ok(s) if s.success() => out::status(&visible(&format!(
                    "saved {} (later sessions read it; this one keeps the prompt it started with)",
                    path.display()
                ))),
                Ok(s) => out::error(&format!("{editor} exited with {s}")),
                Err(e) => out::error(&format!("cannot run {editor} (set $EDITOR): {e}")),
            }
        }
        "--here" => match session.memory_here() {
            Ok(dir) => out::status(&visible(&format!(
                "from the next session on, this workspace's memory lives in {} (commit it, or add it to .gitignore)",
                dir.display()
            ))),
            Err(e) => out::error(&visible(&e.to_string())),
        },
        query => {
            let hits = memory.search(query, 10);
            if hits.is_empty() {
                out::status(&visible(&format!("no memory matches `{query}`")));
            }
            for h in hits {
                match (h.entry, h.line) {
                    (Some(e), _) => out::status(&visible(&format!(
                        "  {} ({}, {}, {}): {}",
                        e.name,
                        h.scope,
                        e.kind.as_str(),
                        e.updated,
                        e.description
                    ))),
                    (None, Some(line)) => out::status(&visible(&format!("  {line} ({} index)", h.scope))),
                    (None, None) => {}
                }
            }
        }
    }
}

/// `/dream`: consolidates the workspace index with one model call, shows the diff, asks.
pub(super) async fn dream(session: &Session, ed: Ed) -> Ed {
    out::status("dreaming: consolidating this workspace's memory with one model call…");
    let plan = match session.dream().await {
        Ok(p) => p,
        Err(e) => {
            out::error(&visible(&e.to_string()));
            return ed;
        }
    };
    if plan.before.as_deref() == Some(plan.after.as_str()) {
        out::status("the dream changed nothing");
        return ed;
    }
    for line in plan.diff.lines() {
        out::status(&visible(line));
    }
    let (ed, answer) = read_line(ed, "  write this index (the old one goes to octo's trash)? [y/N] ").await;
    if matches!(answer.unwrap_or_default().trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        match session.apply_dream(&plan) {
            Ok(()) => out::status(&visible(&format!(
                "wrote {} (undo: octo trash restore {})",
                plan.path.display(),
                plan.path.display()
            ))),
            Err(e) => out::error(&visible(&e.to_string())),
        }
    } else {
        out::status("nothing written");
    }
    ed
}
