//! The web UI's files, compiled in: the page, its style sheet, its JavaScript modules (plain ES
//! modules, no build step), and the code-highlighting colours for both themes.

use crate::state::AppState;
use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use std::sync::{Arc, OnceLock};

const INDEX: &str = include_str!("web/index.html");

/// Every file under `/static/`: its name, type and content.
const FILES: &[(&str, &str, &str)] = &[
    ("app.css", CSS, include_str!("web/app.css")),
    ("js/main.js", JS, include_str!("web/js/main.js")),
    ("js/api.js", JS, include_str!("web/js/api.js")),
    ("js/dom.js", JS, include_str!("web/js/dom.js")),
    ("js/chat.js", JS, include_str!("web/js/chat.js")),
    ("js/cards.js", JS, include_str!("web/js/cards.js")),
    ("js/sidebar.js", JS, include_str!("web/js/sidebar.js")),
    ("js/composer.js", JS, include_str!("web/js/composer.js")),
    ("js/rewind.js", JS, include_str!("web/js/rewind.js")),
];

const CSS: &str = "text/css; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";

pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route(
            "/",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CACHE_CONTROL, "no-store")],
                    page(),
                )
            }),
        )
        .route("/static/{*file}", get(asset))
}

/// The page with its style sheets inlined, so the first paint waits for nothing but the page.
fn page() -> &'static str {
    static PAGE: OnceLock<String> = OnceLock::new();
    PAGE.get_or_init(|| {
        let css = FILES.iter().find(|f| f.0 == "app.css").map_or("", |f| f.2);
        INDEX
            .replace(r#"<link rel="stylesheet" href="/static/app.css">"#, &format!("<style>\n{css}</style>"))
            .replace(
                r#"<link rel="stylesheet" href="/static/hl-dark.css">"#,
                &format!("<style>\n{}</style>", highlight_css(true)),
            )
            .replace(
                r#"<link rel="stylesheet" href="/static/hl-light.css">"#,
                &format!("<style>\n{}</style>", highlight_css(false)),
            )
    })
}

async fn asset(Path(file): Path<String>) -> Response {
    if let Some(dark) = match file.as_str() {
        "hl-dark.css" => Some(true),
        "hl-light.css" => Some(false),
        _ => None,
    } {
        return ([(header::CONTENT_TYPE, CSS)], highlight_css(dark)).into_response();
    }
    match FILES.iter().find(|(name, ..)| *name == file) {
        Some((_, mime, body)) => {
            ([(header::CONTENT_TYPE, *mime), (header::CACHE_CONTROL, "no-cache")], *body).into_response()
        }
        None => (StatusCode::NOT_FOUND, "no such file").into_response(),
    }
}

/// The highlighting colours, made once per theme.
fn highlight_css(dark: bool) -> &'static str {
    static DARK: OnceLock<String> = OnceLock::new();
    static LIGHT: OnceLock<String> = OnceLock::new();
    let cell = if dark { &DARK } else { &LIGHT };
    let scope = if dark { "dark" } else { "light" };
    cell.get_or_init(|| {
        // Scoped to the theme the page shows, so both sheets can be loaded at once.
        octo_markdown::theme_css(dark)
            .lines()
            .map(|l| match l.trim_end().strip_suffix('{') {
                Some(selectors) if l.starts_with('.') => {
                    let scoped: Vec<String> = selectors
                        .split(',')
                        .map(|s| format!(":root[data-theme={scope}] {}", s.trim()))
                        .collect();
                    format!("{} {{", scoped.join(", "))
                }
                _ => l.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    })
}
