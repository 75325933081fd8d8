//! Colour for the terminal (none under `NO_COLOR`), and the task list as coloured lines.

use crate::sanitize::visible;

/// `text` in the SGR colour `code`.
pub(super) fn paint(code: &str, text: &str) -> String {
    if std::env::var_os("NO_COLOR").is_some() {
        text.to_owned()
    } else {
        format!("\x1b[{code}m{text}\x1b[0m")
    }
}

/// The task list as lines: `☐` to do, `▶` in progress, `☑` done, each in its colour.
pub(super) fn checklist(todos: &[octo_app::Todo]) -> Vec<String> {
    todos
        .iter()
        .map(|t| {
            let code = match t.status {
                octo_app::TodoStatus::Pending => "0",
                octo_app::TodoStatus::InProgress => "1",
                octo_app::TodoStatus::Completed => "2",
            };
            let mark = octo_app::commands::todo_mark(t.status);
            paint(code, &visible(&format!("  {mark} {}", t.content)))
        })
        .collect()
}
