//! Whether a failed command's output looks like the sandbox stopped it.

/// What the sandbox most likely refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denial {
    /// A write (or another change) to the file system.
    Write,
    /// A connection or a name lookup.
    Network,
}

/// Looks at a failed command's output for the errors a sandbox denial produces (`None`: nothing
/// points at the sandbox). Network errors are checked first: a refused socket also reads
/// "Operation not permitted".
pub fn denial_hint(output: &str) -> Option<Denial> {
    const NETWORK: &[&str] = &[
        "could not resolve host",
        "temporary failure in name resolution",
        "name or service not known",
        "network is unreachable",
        "couldn't connect to server",
        "failed to connect",
        "connection refused",
        "getaddrinfo",
        "socket: operation not permitted",
        "failed to establish a new connection",
        "unable to access 'http",
        "could not connect",
    ];
    const WRITE: &[&str] = &[
        "read-only file system",
        "permission denied",
        "operation not permitted",
        "eacces",
        "erofs",
        "eperm",
    ];
    let lower = output.to_lowercase();
    if NETWORK.iter().any(|n| lower.contains(n)) {
        return Some(Denial::Network);
    }
    WRITE.iter().any(|n| lower.contains(n)).then_some(Denial::Write)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_the_usual_messages() {
        assert_eq!(denial_hint("sh: 1: cannot create /etc/x: Permission denied"), Some(Denial::Write));
        assert_eq!(
            denial_hint("touch: cannot touch '.git/hooks/x': Read-only file system"),
            Some(Denial::Write)
        );
        assert_eq!(denial_hint("curl: (7) Failed to connect to 127.0.0.1 port 80"), Some(Denial::Network));
        assert_eq!(denial_hint("curl: (6) Could not resolve host: example.com"), Some(Denial::Network));
        assert_eq!(denial_hint("error: test failed, 2 passed"), None);
    }
}
