//! What the suites share: a session started on a scenario of octo-testkit (its temp home,
//! workspace, config and mock model), as the launcher or the facade starts one.

use octo_app::config::{Config, Overrides};
use octo_app::credentials::{KeyStore, MemoryStore};
use octo_app::{Home, Launcher, Mode, Session, SessionOptions};
use octo_testkit::scenario::Built;
use octo_testkit::TempHome;
use std::sync::Arc;

/// A launcher over `home` (no keyring, keys in memory, the mock's key in the environment).
pub fn launcher(home: &TempHome) -> Launcher {
    Launcher::new(
        Home::new(home.home()),
        KeyStore::None,
        Arc::new(MemoryStore::default()),
        Arc::new(Built::env),
    )
}

/// A session on the scenario's workspace, started through the facade with `options` (the
/// workspace filled in, and the scenario's mode unless `options` names one).
pub fn started(built: &Built, options: SessionOptions) -> Session {
    let config = Config::load(&built.home_dir(), &built.workspace(), &Built::env, &Overrides::default())
        .unwrap_or_else(|e| panic!("the scenario's config: {e}"));
    let mode = options.mode.or_else(|| built.mode.as_deref().map(|m| m.parse::<Mode>().unwrap()));
    let options = SessionOptions { workspace: Some(built.workspace()), mode, ..options };
    Session::start(config, options, &MemoryStore::default(), &Built::env)
        .unwrap_or_else(|e| panic!("the scenario's session: {e}"))
}
