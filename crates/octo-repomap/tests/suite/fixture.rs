//! A small repository in several languages: a store and a network layer, and callers of each.

use std::path::Path;

pub fn write(root: &Path, files: &[(&str, &str)]) {
    for (rel, text) in files {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

pub fn project(root: &Path) {
    write(
        root,
        &[
            ("src/store.rs", "pub struct Store { rows: Vec<u32> }\n\npub fn open_store(path: &str) -> Store {\n    Store { rows: Vec::new() }\n}\n"),
            ("src/net.rs", "pub struct Socket;\n\npub fn connect_socket(addr: &str) -> Socket {\n    Socket\n}\n"),
            ("src/app.rs", "use crate::store::open_store;\n\npub fn run_app() {\n    let s = open_store(\"db\");\n}\n"),
            ("src/cli.rs", "pub fn run_cli() {\n    let a = crate::net::connect_socket(\"a\");\n    let b = crate::net::connect_socket(\"b\");\n}\n"),
            ("src/server.rs", "pub fn serve() {\n    let s = crate::net::connect_socket(\"0.0.0.0\");\n}\n"),
            ("tools/report.py", "from lib import render_table\n\nclass Report:\n    def build(self):\n        return render_table([])\n"),
            ("tools/lib.py", "def render_table(rows):\n    return str(rows)\n"),
            ("web/cart.ts", "export interface Cart { items: number[] }\nexport function total(c: Cart): number { return c.items.length; }\n"),
            ("README.md", "# not source\n"),
        ],
    );
}
