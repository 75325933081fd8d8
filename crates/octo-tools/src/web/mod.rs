//! Web tools: `web_fetch` and `web_search`.

pub mod fetch;
pub mod host;
pub mod html;
pub mod search;

pub use fetch::WebFetch;
pub use search::{SearchResult, WebSearch};
