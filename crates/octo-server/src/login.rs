//! One-time login codes and the browser sessions they are exchanged for.

/// How long a login link works (once).
pub const LOGIN_LINK_LIFETIME: std::time::Duration = std::time::Duration::from_secs(600);

/// One-time login codes (the link `octo serve` prints carries one, not the permanent token) and
/// the browser sessions they were exchanged for. A code works once, within
/// [`LOGIN_LINK_LIFETIME`]; a session lasts as long as this server runs.
#[derive(Debug, Default)]
pub struct Logins {
    codes: std::sync::Mutex<std::collections::HashMap<String, std::time::Instant>>,
    sessions: std::sync::Mutex<std::collections::HashSet<String>>,
}

impl Logins {
    /// A new one-time code.
    pub fn new_code(&self) -> std::io::Result<String> {
        let code = random_hex()?;
        let mut codes = self.codes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        codes.retain(|_, made| made.elapsed() < LOGIN_LINK_LIFETIME);
        codes.insert(code.clone(), std::time::Instant::now());
        Ok(code)
    }

    /// Spends `code`: whether it was valid.
    pub(crate) fn spend(&self, code: &str) -> bool {
        let mut codes = self.codes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        codes.remove(code).is_some_and(|made| made.elapsed() < LOGIN_LINK_LIFETIME)
    }

    pub(crate) fn open_session(&self) -> std::io::Result<String> {
        let id = random_hex()?;
        self.sessions.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(id.clone());
        Ok(id)
    }

    pub(crate) fn is_session(&self, id: &str) -> bool {
        self.sessions.lock().unwrap_or_else(std::sync::PoisonError::into_inner).contains(id)
    }
}

/// 256 random bits as hex.
pub(crate) fn random_hex() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
