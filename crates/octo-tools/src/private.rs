//! Files and directories only the user can read: trashed file contents and command output can
//! hold secrets. The helpers live with the command runner in `octo-exec`.

pub use octo_exec::private::{create_dir, new_file};
