//! What the trusted roots cost, the choice behind `octo_provider::tls`: the platform's store
//! (`rustls-platform-verifier`, reading every certificate of the system on Linux) against roots
//! compiled into the binary (`webpki-roots`), each built fresh, and what building a client costs
//! now that neither happens then.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark fails loudly

use std::sync::Arc;
use std::time::{Duration, Instant};

fn median(mut runs: Vec<Duration>) -> f64 {
    runs.sort();
    runs[runs.len() / 2].as_secs_f64() * 1e3
}

fn main() {
    octo_provider::tls::install();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let platform = median(
        (0..20)
            .map(|_| {
                let t = Instant::now();
                let v = rustls_platform_verifier::Verifier::new(Arc::clone(&provider)).unwrap();
                std::hint::black_box(v);
                t.elapsed()
            })
            .collect(),
    );
    let compiled = median(
        (0..20)
            .map(|_| {
                let t = Instant::now();
                let store = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
                let v = rustls::client::WebPkiServerVerifier::builder_with_provider(
                    Arc::new(store),
                    Arc::clone(&provider),
                )
                .build()
                .unwrap();
                std::hint::black_box(v);
                t.elapsed()
            })
            .collect(),
    );
    let client = median(
        (0..50)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(
                    octo_provider::build_client(&octo_provider::HttpConfig::default()).unwrap(),
                );
                t.elapsed()
            })
            .collect(),
    );
    println!(
        "trusted roots: platform store {platform:>6.2} ms, compiled-in {compiled:>6.3} ms (median of 20)"
    );
    println!("building a client (roots not loaded): median {client:>6.3} ms");
}
