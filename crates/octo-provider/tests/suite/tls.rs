//! https through octo's client, against a TLS server on loopback whose certificate a test
//! authority signed: no root is read when the client is built; the first handshake reads the
//! system store (here `SSL_CERT_FILE`, holding the test authority) and succeeds; a server whose
//! certificate no trusted authority signed is refused. The checks run in a child process of
//! this test binary, started with `SSL_CERT_FILE` set: the trusted roots are loaded once per
//! process, and the environment is not changed under other tests' feet.

use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A server on loopback that answers every request with `hello` over TLS with `cert`/`key`.
async fn serve(cert: rcgen::Certificate, key: &KeyPair) -> u16 {
    use tokio_rustls::rustls;
    let config =
        rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).unwrap(),
            )
            .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else { return };
                let mut buf = [0u8; 4096];
                let _ = tls.read(&mut buf).await;
                let _ = tls
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello")
                    .await;
                let _ = tls.shutdown().await;
            });
        }
    });
    port
}

fn leaf(issuer: Option<(&rcgen::Issuer<'_, KeyPair>,)>) -> (rcgen::Certificate, KeyPair) {
    let key = KeyPair::generate().unwrap();
    let params = CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
    let cert = match issuer {
        Some((ca,)) => params.signed_by(&key, ca).unwrap(),
        None => params.self_signed(&key).unwrap(),
    };
    (cert, key)
}

/// The test authority's certificate, without its key.
fn ca_params() -> CertificateParams {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
}

/// Set (to the folder holding `ca.pem` and `ca.key`) when this binary runs as the child.
const CHILD_ENV: &str = "OCTO_TLS_TEST_DIR";

#[test]
fn https_loads_the_trusted_roots_at_the_first_handshake_and_checks_them() {
    let ca_key = KeyPair::generate().unwrap();
    let ca_cert = ca_params().self_signed(&ca_key).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ca.pem"), ca_cert.pem()).unwrap();
    std::fs::write(dir.path().join("ca.key"), ca_key.serialize_pem()).unwrap();
    // The platform store on Linux honours SSL_CERT_FILE: in the child, only the test authority.
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["suite::tls::tls_child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, dir.path())
        .env("SSL_CERT_FILE", dir.path().join("ca.pem"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && text.contains("1 passed"), "{text}");
}

/// Not a test on its own: the checks, when the test above starts this binary as its child.
#[test]
fn tls_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else { return };
    let dir = std::path::PathBuf::from(dir);
    let key = KeyPair::from_pem(&std::fs::read_to_string(dir.join("ca.key")).unwrap()).unwrap();
    // The same name and key as the authority in `ca.pem`: what it signs chains to it.
    let issuer = rcgen::Issuer::new(ca_params(), key);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(async move {
        let client = octo_provider::build_client(&octo_provider::HttpConfig::default()).unwrap();
        assert!(!octo_provider::tls::roots_loaded(), "building a client reads no certificate");

        let (cert, key) = leaf(Some((&issuer,)));
        let port = serve(cert, &key).await;
        let reply = client.get(format!("https://localhost:{port}/")).send().await.unwrap();
        assert_eq!(reply.status(), 200);
        assert_eq!(reply.text().await.unwrap(), "hello");
        assert!(octo_provider::tls::roots_loaded(), "the handshake loaded them");

        let (cert, key) = leaf(None);
        let port = serve(cert, &key).await;
        let err = client.get(format!("https://localhost:{port}/")).send().await.unwrap_err();
        let chain = format!("{err:?}");
        assert!(chain.contains("InvalidCertificate"), "an untrusted certificate is refused: {chain}");
    });
}
