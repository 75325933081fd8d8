//! The programs a command line really runs, for deny and ask rules to match against.

use super::inner::{inner_script, MAX_DEPTH};
use super::words::{basename, strip_wrappers};
use crate::secrets::Secrets;
use crate::shell::syntax;
use std::path::Path;

/// The programs a command line really runs, with wrappers, quotes and the programs' directories
/// removed (`sudo -u root /usr/bin/curl "x"` → `curl x`), inner scripts included. Deny and ask
/// rules match against these.
pub fn command_segments(command: &str) -> Vec<String> {
    let secrets = Secrets::from_env();
    let mut out = Vec::new();
    segments_at(command, &secrets, 0, &mut out);
    out
}

fn segments_at(command: &str, secrets: &Secrets, depth: usize, out: &mut Vec<String>) {
    let script = syntax::parse(command, Path::new("/"), secrets.home());
    for c in &script.commands {
        let words = strip_wrappers(&c.words);
        let Some((prog, args)) = words.split_first() else { continue };
        let mut seg = vec![basename(&prog.text).to_owned()];
        seg.extend(args.iter().map(|a| a.text.clone()));
        out.push(seg.join(" "));
        if depth < MAX_DEPTH {
            if let Some(Some(inner)) = inner_script(c, words) {
                segments_at(&inner, secrets, depth + 1, out);
            }
        }
    }
}
