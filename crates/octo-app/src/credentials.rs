//! API keys: the OS keyring first, then the vendor's usual environment variable. Keys never
//! appear in sessions, logs, events or error messages.

use std::collections::HashMap;
use std::sync::Mutex;
use thiserror::Error;

/// The keyring service name octo stores keys under.
pub(crate) const KEYRING_SERVICE: &str = "octo";

/// A credential store failed.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CredentialError {
    /// No keyring service is available (headless Linux without a Secret Service, CI).
    #[error("no OS keyring is available ({0}); set the key in an environment variable instead")]
    Unavailable(String),
    /// The store refused or failed.
    #[error("the keyring failed: {0}")]
    Failed(String),
}

/// Where keys are kept.
pub trait CredentialStore: Send + Sync {
    /// The key stored for `endpoint`, if any.
    fn get(&self, endpoint: &str) -> Result<Option<String>, CredentialError>;
    /// Stores a key for `endpoint`.
    fn set(&self, endpoint: &str, key: &str) -> Result<(), CredentialError>;
    /// Removes the key for `endpoint`; returns whether there was one.
    fn remove(&self, endpoint: &str) -> Result<bool, CredentialError>;
}

/// The operating system's keyring (macOS Keychain, Windows Credential Manager, the Secret
/// Service on Linux).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct OsKeyring;

fn entry(endpoint: &str) -> Result<keyring::Entry, CredentialError> {
    keyring::Entry::new(KEYRING_SERVICE, endpoint).map_err(classify)
}

fn classify(e: keyring::Error) -> CredentialError {
    match e {
        keyring::Error::PlatformFailure(inner) | keyring::Error::NoStorageAccess(inner) => {
            CredentialError::Unavailable(inner.to_string())
        }
        other => CredentialError::Failed(other.to_string()),
    }
}

/// Runs a keyring call on a thread of its own. The Secret Service client blocks on a runtime of
/// its own, which panics on a thread that already drives one (every octo front end calls from
/// inside tokio); a plain thread has none.
fn off_runtime<T: Send>(
    call: impl FnOnce() -> Result<T, CredentialError> + Send,
) -> Result<T, CredentialError> {
    std::thread::scope(|s| {
        s.spawn(call)
            .join()
            .unwrap_or_else(|_| Err(CredentialError::Failed("the keyring call panicked".into())))
    })
}

impl CredentialStore for OsKeyring {
    fn get(&self, endpoint: &str) -> Result<Option<String>, CredentialError> {
        off_runtime(|| match entry(endpoint)?.get_password() {
            Ok(k) => Ok(Some(k)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(classify(e)),
        })
    }

    fn set(&self, endpoint: &str, key: &str) -> Result<(), CredentialError> {
        off_runtime(|| entry(endpoint)?.set_password(key).map_err(classify))
    }

    fn remove(&self, endpoint: &str) -> Result<bool, CredentialError> {
        off_runtime(|| match entry(endpoint)?.delete_credential() {
            Ok(()) => Ok(true),
            Err(keyring::Error::NoEntry) => Ok(false),
            Err(e) => Err(classify(e)),
        })
    }
}

/// Keys in memory: for tests and for embedding octo where keys come from elsewhere.
#[derive(Debug, Default)]
pub struct MemoryStore {
    keys: Mutex<HashMap<String, String>>,
}

impl MemoryStore {
    /// A store holding these `(endpoint, key)` pairs.
    pub fn with(pairs: &[(&str, &str)]) -> Self {
        let s = Self::default();
        for (e, k) in pairs {
            s.lock().insert((*e).to_owned(), (*k).to_owned());
        }
        s
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.keys.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl CredentialStore for MemoryStore {
    fn get(&self, endpoint: &str) -> Result<Option<String>, CredentialError> {
        Ok(self.lock().get(endpoint).cloned())
    }
    fn set(&self, endpoint: &str, key: &str) -> Result<(), CredentialError> {
        self.lock().insert(endpoint.to_owned(), key.to_owned());
        Ok(())
    }
    fn remove(&self, endpoint: &str) -> Result<bool, CredentialError> {
        Ok(self.lock().remove(endpoint).is_some())
    }
}

/// Keys in a JSON file readable only by the user (mode 0600), for machines without a keyring
/// service (headless servers, containers) and for tests that span processes. Writes replace the
/// file atomically, so a crash never leaves half a file.
#[derive(Debug, Clone)]
pub struct FileStore {
    path: std::path::PathBuf,
}

impl FileStore {
    /// A store kept in `path` (created on the first `set`).
    pub fn new(path: impl Into<std::path::PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// An exclusive lock on a sidecar file, so two processes changing keys at once do not lose
    /// one another's change. Released when dropped.
    fn lock(&self) -> Result<std::fs::File, CredentialError> {
        let fail =
            |e: std::io::Error| CredentialError::Failed(format!("cannot lock {}: {e}", self.path.display()));
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(fail)?;
        }
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.path.with_extension("lock"))
            .map_err(fail)?;
        f.lock().map_err(fail)?;
        Ok(f)
    }

    fn read(&self) -> Result<HashMap<String, String>, CredentialError> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                CredentialError::Failed(format!("{} is not a key file ({e})", self.path.display()))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(HashMap::new()),
            Err(e) => Err(CredentialError::Failed(format!("cannot read {}: {e}", self.path.display()))),
        }
    }

    fn write(&self, keys: &HashMap<String, String>) -> Result<(), CredentialError> {
        use std::io::Write;
        let fail =
            |e: std::io::Error| CredentialError::Failed(format!("cannot write {}: {e}", self.path.display()));
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(fail)?;
        }
        let bytes = serde_json::to_vec_pretty(keys).map_err(|e| CredentialError::Failed(e.to_string()))?;
        let tmp = self.path.with_extension(format!("tmp{}", std::process::id()));
        // A leftover temp file (a crash, then a reused pid) may have looser permissions: start
        // from a new file, created private.
        let _ = std::fs::remove_file(&tmp);
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let mut f = opts.open(&tmp).map_err(fail)?;
        f.write_all(&bytes).and_then(|()| f.sync_all()).map_err(fail)?;
        drop(f);
        std::fs::rename(&tmp, &self.path).map_err(fail)
    }
}

impl CredentialStore for FileStore {
    fn get(&self, endpoint: &str) -> Result<Option<String>, CredentialError> {
        Ok(self.read()?.remove(endpoint))
    }
    fn set(&self, endpoint: &str, key: &str) -> Result<(), CredentialError> {
        let _lock = self.lock()?;
        let mut keys = self.read()?;
        keys.insert(endpoint.to_owned(), key.to_owned());
        self.write(&keys)
    }
    fn remove(&self, endpoint: &str) -> Result<bool, CredentialError> {
        let _lock = self.lock()?;
        let mut keys = self.read()?;
        let had = keys.remove(endpoint).is_some();
        if had {
            self.write(&keys)?;
        }
        Ok(had)
    }
}

/// Which key store a process uses, chosen from its environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyStore {
    /// The operating system's keyring.
    OsKeyring,
    /// A private key file (`OCTO_KEYRING_FILE`), for machines without a keyring service.
    File(std::path::PathBuf),
    /// None at all (`OCTO_NO_KEYRING`): keys come from the environment only.
    None,
}

impl KeyStore {
    /// `OCTO_KEYRING_FILE` names a key file (when not empty); `OCTO_NO_KEYRING`, set to anything
    /// (even nothing), turns the store off; otherwise the OS keyring. `env` must report a
    /// variable that is set but empty as `Some("")`.
    pub(crate) fn from_env(env: crate::config::EnvLookup<'_>) -> Self {
        if let Some(path) = env("OCTO_KEYRING_FILE").filter(|p| !p.is_empty()) {
            Self::File(path.into())
        } else if env("OCTO_NO_KEYRING").is_some() {
            Self::None
        } else {
            Self::OsKeyring
        }
    }

    /// Opens it.
    pub(crate) fn open(&self) -> std::sync::Arc<dyn CredentialStore> {
        match self {
            Self::OsKeyring => std::sync::Arc::new(OsKeyring),
            Self::File(p) => std::sync::Arc::new(FileStore::new(p)),
            Self::None => std::sync::Arc::new(MemoryStore::default()),
        }
    }

    /// Where keys go, for messages.
    pub fn describe(&self) -> &'static str {
        match self {
            Self::OsKeyring => "the OS keyring",
            Self::File(_) => "the key file (OCTO_KEYRING_FILE)",
            Self::None => "no key store (OCTO_NO_KEYRING is set)",
        }
    }

    /// Whether keys stored there outlive the process.
    pub fn persists(&self) -> bool {
        !matches!(self, Self::None)
    }
}

/// Where a key was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// The keyring entry for the endpoint.
    Keyring,
    /// This environment variable.
    Env(String),
}

/// Finds the key for `endpoint`: the store first, then `env_var`. A store that is unavailable is
/// reported in `notes` (once) and skipped.
pub(crate) fn resolve_key(
    store: &dyn CredentialStore,
    endpoint: &str,
    env_var: Option<&str>,
    env: crate::config::EnvLookup<'_>,
    notes: &mut Vec<String>,
) -> Option<(String, KeySource)> {
    let unavailable = match store.get(endpoint) {
        Ok(Some(k)) if !k.trim().is_empty() => return Some((k.trim().to_owned(), KeySource::Keyring)),
        Ok(_) => None,
        Err(e) => Some(e),
    };
    let from_env = env_var.and_then(|var| {
        env(var)
            .filter(|k| !k.trim().is_empty())
            .map(|k| (k.trim().to_owned(), KeySource::Env(var.to_owned())))
    });
    // A keyring that cannot be asked is worth a note only when the key is not found elsewhere.
    if let (None, Some(e)) = (&from_env, unavailable) {
        notes.push(e.to_string());
    }
    from_env
}

#[cfg(test)]
mod tests {
    use super::CredentialStore;

    /// Every front end asks from inside tokio; the Secret Service client must not panic there
    /// (whether a keyring service answers or not).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_os_keyring_can_be_asked_from_inside_a_runtime() {
        let got = super::OsKeyring.get("octo-test-no-such-endpoint");
        assert!(!matches!(&got, Ok(Some(_))), "{got:?}");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn the_os_keyring_can_be_asked_from_a_single_threaded_runtime() {
        let got = super::OsKeyring.get("octo-test-no-such-endpoint");
        assert!(!matches!(&got, Ok(Some(_))), "{got:?}");
    }

    #[test]
    fn the_file_store_keeps_keys_private_and_survives_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/keys.json");
        let s = super::FileStore::new(&path);
        assert_eq!(s.get("a").unwrap(), None, "no file yet is an empty store");
        s.set("a", "sk-1").unwrap();
        s.set("b", "sk-2").unwrap();
        let again = super::FileStore::new(&path);
        assert_eq!(again.get("a").unwrap().as_deref(), Some("sk-1"));
        assert!(again.remove("a").unwrap());
        assert!(!again.remove("a").unwrap());
        assert_eq!(s.get("b").unwrap().as_deref(), Some("sk-2"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        std::fs::write(&path, "not json").unwrap();
        let e = s.get("b").unwrap_err();
        assert!(e.to_string().contains("is not a key file"), "{e}");
    }

    use super::*;

    struct Broken;
    impl CredentialStore for Broken {
        fn get(&self, _: &str) -> Result<Option<String>, CredentialError> {
            Err(CredentialError::Unavailable("no dbus session".into()))
        }
        fn set(&self, _: &str, _: &str) -> Result<(), CredentialError> {
            Err(CredentialError::Unavailable("no dbus session".into()))
        }
        fn remove(&self, _: &str) -> Result<bool, CredentialError> {
            Err(CredentialError::Unavailable("no dbus session".into()))
        }
    }

    #[test]
    fn keyring_first_then_env_and_an_unavailable_keyring_is_said() {
        let env = |v: &str| (v == "DEEPSEEK_API_KEY").then(|| "sk-env".to_owned());
        let mut notes = Vec::new();
        let store = MemoryStore::with(&[("deepseek", "sk-ring")]);
        assert_eq!(
            resolve_key(&store, "deepseek", Some("DEEPSEEK_API_KEY"), &env, &mut notes),
            Some(("sk-ring".into(), KeySource::Keyring))
        );
        assert_eq!(
            resolve_key(&MemoryStore::default(), "deepseek", Some("DEEPSEEK_API_KEY"), &env, &mut notes),
            Some(("sk-env".into(), KeySource::Env("DEEPSEEK_API_KEY".into())))
        );
        assert!(notes.is_empty());
        // A keyring that cannot be asked is said only when the key is not found elsewhere.
        let found = resolve_key(&Broken, "deepseek", Some("DEEPSEEK_API_KEY"), &env, &mut notes);
        assert_eq!(found.map(|f| f.1), Some(KeySource::Env("DEEPSEEK_API_KEY".into())));
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(resolve_key(&Broken, "deepseek", Some("OTHER_KEY"), &env, &mut notes), None);
        assert!(notes[0].contains("no OS keyring") && notes[0].contains("environment variable"), "{notes:?}");
        assert_eq!(resolve_key(&MemoryStore::default(), "x", None, &env, &mut notes), None);
    }

    #[test]
    fn memory_store_round_trip() {
        let s = MemoryStore::default();
        s.set("a", "k").unwrap();
        assert_eq!(s.get("a").unwrap().as_deref(), Some("k"));
        assert!(s.remove("a").unwrap());
        assert!(!s.remove("a").unwrap());
    }
}
