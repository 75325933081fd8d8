//! File tools: read, write, edit, list.

mod edit;
mod list;
mod read;
mod sink;
mod write;

pub use edit::{apply_edit, Edit, EditFile, MultiEdit};
pub use list::ListDir;
pub use read::ReadFile;
pub use write::WriteFile;
