//! TLS for every HTTP client octo builds: rustls with the ring provider, and the platform's
//! trusted roots (`rustls-platform-verifier`: the system store, so a company's own CA works)
//! loaded when the first `https` handshake needs them, once per process — not when a client is
//! built. A one-shot run against `http://127.0.0.1` never opens a certificate file; one against an
//! `https` endpoint can start loading them beside its other start-up work ([`prewarm`]).

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use std::sync::{Arc, OnceLock};

/// Makes rustls's ring provider the process's TLS crypto (once; a provider someone else
/// installed first is kept).
pub fn install() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

fn provider() -> Arc<CryptoProvider> {
    install();
    CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()))
}

/// The verifier over the platform's roots, built on first use (the slow part: on Linux every
/// certificate of the system store is read and parsed).
static ROOTS: OnceLock<Result<Arc<rustls_platform_verifier::Verifier>, String>> = OnceLock::new();

fn roots() -> &'static Result<Arc<rustls_platform_verifier::Verifier>, String> {
    ROOTS.get_or_init(|| {
        rustls_platform_verifier::Verifier::new(provider()).map(Arc::new).map_err(|e| {
            format!(
                "the system's trusted certificates could not be loaded ({e}); install them (Debian: apt install ca-certificates)"
            )
        })
    })
}

/// Starts loading the trusted roots on a thread of their own, so the first `https` handshake
/// finds them ready. Cheap when they are loaded or loading already.
pub fn prewarm() {
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| {
        let _ = std::thread::Builder::new().name("octo-tls-roots".into()).spawn(|| {
            let _ = roots();
        });
    });
}

/// Verifies servers against the platform's roots, loading them at the first handshake.
#[derive(Debug)]
struct LazyRoots {
    provider: Arc<CryptoProvider>,
}

impl LazyRoots {
    fn inner(&self) -> Result<&rustls_platform_verifier::Verifier, rustls::Error> {
        roots().as_ref().map(AsRef::as_ref).map_err(|e| rustls::Error::General(e.clone()))
    }
}

impl ServerCertVerifier for LazyRoots {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.inner()?.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

/// The client TLS configuration every octo client uses (built once; cloning it is cheap):
/// TLS 1.2 and 1.3, HTTP/1.1, the platform's roots loaded lazily. Clients get it through
/// [`crate::http::builder`].
pub(crate) fn client_config() -> Result<rustls::ClientConfig, String> {
    static CONFIG: OnceLock<Result<rustls::ClientConfig, String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let provider = provider();
            let mut config = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
                .with_safe_default_protocol_versions()
                .map_err(|e| format!("TLS versions: {e}"))?
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(LazyRoots { provider }))
                .with_no_client_auth();
            config.alpn_protocols = vec![b"http/1.1".to_vec()];
            Ok(config)
        })
        .clone()
}

/// Whether the trusted roots have been loaded (or tried) in this process.
pub fn roots_loaded() -> bool {
    ROOTS.get().is_some()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_config_is_built_without_reading_a_certificate() {
        let config = client_config().unwrap();
        assert_eq!(config.alpn_protocols, vec![b"http/1.1".to_vec()]);
        assert!(!roots_loaded(), "building a client loads no roots");
    }
}
