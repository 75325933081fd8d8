mod faults;
mod real;

use octo_lsp::{Lsp, Resolved, ServerConfig, Settings};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The servers found on `PATH` (the built-in defaults only).
pub fn installed() -> Vec<Resolved> {
    octo_lsp::resolve(&BTreeMap::new(), std::env::var_os("PATH").as_deref())
}

/// The installed default called `name`, or `None` (a failure when the servers are required).
pub fn server(names: &[&str]) -> Option<Resolved> {
    let found = installed().into_iter().find(|r| names.contains(&r.name.as_str()));
    if found.is_none() {
        assert!(
            std::env::var("OCTO_TEST_LSP").as_deref() != Ok("1"),
            "OCTO_TEST_LSP=1 but none of {names:?} is on PATH"
        );
        eprintln!("skipped: none of {names:?} is installed");
    }
    found
}

/// A server run by a script written into `dir`.
pub fn scripted(dir: &Path, name: &str, script: &str, extensions: &[&str]) -> Resolved {
    let program = dir.join(name);
    std::fs::write(&program, format!("#!/bin/sh\n{script}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    Resolved {
        name: name.to_owned(),
        config: ServerConfig {
            command: program.display().to_string(),
            args: Vec::new(),
            extensions: extensions.iter().map(|e| (*e).to_owned()).collect(),
            root_markers: Vec::new(),
            initialization_options: None,
            env: BTreeMap::new(),
            settings: None,
            language_ids: BTreeMap::new(),
            disabled: false,
        },
        program: Some(program),
        configured: true,
    }
}

/// The servers of `workspace`, in the sandbox when `sandboxed`.
pub fn lsp(workspace: &Path, servers: Vec<Resolved>, settings: Settings, sandboxed: bool) -> Arc<Lsp> {
    let sandbox = sandboxed.then(|| {
        let policy = octo_exec::sandbox::Policy::new(octo_exec::sandbox::Mode::WorkspaceWrite, workspace);
        Arc::new(octo_exec::sandbox::Sandbox::new(policy))
    });
    Arc::new(Lsp::new(workspace, servers, sandbox, octo_exec::env::ShellEnv::default(), settings))
}

/// Settings with a wait generous enough for a cold server on a slow machine.
pub fn patient() -> Settings {
    Settings { wait: Duration::from_secs(30), ..Settings::default() }
}

/// A temporary workspace with these files.
pub fn workspace(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for (name, text) in files {
        let p = root.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    (dir, root)
}
