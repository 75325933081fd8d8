//! Where a URL goes: the user's own machine or network (loopback, private, link-local addresses,
//! `localhost`, intranet names), a documentation host, or anywhere else; and whether it carries
//! data that looks encoded (a way to send something out in a request that only "reads").
//!
//! The permission engine decides on the URL as written; [`super::fetch`] checks again on every
//! redirect and after resolving names, so a public name that points at a private address is
//! caught too.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Hosts of documentation and package registries that may be fetched without asking (their
/// subdomains too). Short on purpose: each one serves only what its owners publish, and none
/// shows a publisher who fetched which page (so no `readthedocs.io`, whose projects see their
/// traffic).
pub const DOC_HOSTS: &[&str] = &[
    "docs.rs",
    "crates.io",
    "doc.rust-lang.org",
    "rust-lang.github.io",
    "docs.python.org",
    "pypi.org",
    "npmjs.com",
    "nodejs.org",
    "developer.mozilla.org",
    "pkg.go.dev",
    "go.dev",
    "docs.oracle.com",
    "learn.microsoft.com",
    "cppreference.com",
    "kotlinlang.org",
    "docs.swift.org",
    "ruby-doc.org",
    "rubygems.org",
    "hexdocs.pm",
    "docs.github.com",
    "man7.org",
];

/// What a host is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostKind {
    /// The user's machine or network; the text says which kind.
    Private(String),
    /// A documentation host of [`DOC_HOSTS`].
    Docs,
    /// Anywhere else.
    Public,
}

/// Parses `raw` the way the HTTP client will (so `http://2130706433/` is `127.0.0.1`, as it is
/// for the connection).
pub fn parse(raw: &str) -> Option<reqwest::Url> {
    reqwest::Url::parse(raw.trim()).ok()
}

/// The host of a URL, lowercase, without brackets or a trailing dot.
pub fn host_of(url: &reqwest::Url) -> Option<String> {
    Some(match url.host()? {
        url::Host::Domain(d) => d.trim_end_matches('.').to_ascii_lowercase(),
        url::Host::Ipv4(ip) => ip.to_string(),
        url::Host::Ipv6(ip) => ip.to_string(),
    })
}

/// Classifies the host of `url`.
pub fn classify(url: &reqwest::Url) -> HostKind {
    match url.host() {
        None => HostKind::Private("a URL without a host".into()),
        Some(url::Host::Ipv4(ip)) => ip_kind(IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => ip_kind(IpAddr::V6(ip)),
        Some(url::Host::Domain(d)) => name_kind(&d.trim_end_matches('.').to_ascii_lowercase()),
    }
}

fn ip_kind(ip: IpAddr) -> HostKind {
    match private_ip(ip) {
        Some(what) => HostKind::Private(format!("{ip} is {what}")),
        None => HostKind::Public,
    }
}

fn name_kind(name: &str) -> HostKind {
    if name == "localhost" || name.ends_with(".localhost") {
        return HostKind::Private(format!("{name} is this machine"));
    }
    let local_suffix = [".local", ".internal", ".lan", ".home.arpa", ".intranet", ".corp"]
        .iter()
        .find(|s| name.ends_with(**s));
    if let Some(s) = local_suffix {
        return HostKind::Private(format!("{name} is a local-network name ({s})"));
    }
    if !name.contains('.') {
        return HostKind::Private(format!("{name} is a single-label name (this machine's network)"));
    }
    if DOC_HOSTS.iter().any(|d| name == *d || name.strip_suffix(d).is_some_and(|p| p.ends_with('.'))) {
        return HostKind::Docs;
    }
    HostKind::Public
}

/// What kind of non-public address `ip` is, if it is one.
pub fn private_ip(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => private_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return private_v4(v4);
            }
            private_v6(v6)
        }
    }
}

fn private_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        (127, _, _) => "a loopback address (this machine)",
        (0, _, _) => "an unspecified address (this machine)",
        (10, _, _) | (192, 168, _) => "a private-network address",
        (172, 16..=31, _) => "a private-network address",
        (169, 254, _) => "a link-local address (cloud metadata services live here)",
        (100, 64..=127, _) => "a carrier-grade NAT address",
        (192, 0, 0) => "an IETF protocol address",
        (198, 18..=19, _) => "a benchmarking-network address",
        (224..=255, _, _) => "a multicast or reserved address",
        _ => return None,
    })
}

fn private_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    if ip.is_loopback() {
        Some("a loopback address (this machine)")
    } else if ip.is_unspecified() {
        Some("an unspecified address (this machine)")
    } else if s[0] & 0xfe00 == 0xfc00 {
        Some("a unique-local (private-network) address")
    } else if s[0] & 0xffc0 == 0xfe80 {
        Some("a link-local address")
    } else if s[0] & 0xff00 == 0xff00 {
        Some("a multicast address")
    } else if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        // NAT64: the IPv4 address is in the last 32 bits.
        let v4 = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
        private_v4(v4)
    } else {
        None
    }
}

/// Whether a command argument reaches a cloud metadata service (which hands out the machine's
/// credentials): a link-local address, or a metadata host name, bare or in a URL.
pub fn metadata_service(arg: &str) -> Option<String> {
    let host = match parse(arg).filter(reqwest::Url::has_host) {
        Some(u) => host_of(&u)?,
        None => {
            let bare = arg.split(['/', ':']).next().unwrap_or(arg);
            parse(&format!("http://{bare}/")).and_then(|u| host_of(&u)).filter(|_| !bare.is_empty())?
        }
    };
    if host == "metadata.google.internal" || host == "metadata" || host == "instance-data" {
        return Some(format!("{host}, a cloud metadata service"));
    }
    let ip: IpAddr = host.parse().ok()?;
    let link_local = match ip {
        IpAddr::V4(v4) => v4.octets()[..2] == [169, 254],
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80 || v6.segments()[..2] == [0xfd00, 0x0ec2],
    };
    link_local.then(|| format!("{ip}, a link-local address where cloud metadata services answer"))
}

/// How many characters of the URL's path and query look like encoded data (base64, hex,
/// percent-encoded bytes), when that is more than a small amount; `None` otherwise.
pub fn encoded_data(url: &reqwest::Url) -> Option<usize> {
    const TOKEN: usize = 8;
    const FLAG: usize = 64;
    let text = format!("{}?{}", url.path(), url.query().unwrap_or(""));
    let total: usize = text
        .split(['/', '?', '&', '=', ';', ',', '#', '.', '~'])
        .filter(|t| t.len() >= TOKEN && looks_encoded(t))
        .map(str::len)
        .sum();
    (total >= FLAG).then_some(total)
}

/// Whether a piece of a URL looks like data rather than words: percent-encoded bytes, letters
/// mixed with digits, or case changing inside it the way base64 does.
fn looks_encoded(t: &str) -> bool {
    if !t.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '_' | '%')) {
        return false;
    }
    let percent = t.matches('%').count();
    let digits = t.chars().any(|c| c.is_ascii_digit());
    let letters = t.chars().any(|c| c.is_ascii_alphabetic());
    let inner_upper = t.chars().skip(1).filter(char::is_ascii_uppercase).count();
    let lower = t.chars().filter(char::is_ascii_lowercase).count();
    percent * 3 >= t.len() / 2 || (digits && letters) || (inner_upper >= 3 && lower >= 3)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn kind(u: &str) -> HostKind {
        classify(&parse(u).unwrap())
    }

    #[test]
    fn private_addresses_in_every_spelling_are_private() {
        for u in [
            "http://127.0.0.1:8080/",
            "http://[::1]/",
            "http://169.254.169.254/latest/meta-data/",
            "http://2130706433/",
            "http://0x7f000001/",
            "http://0177.0.0.1/",
            "http://127.1/",
            "http://0.0.0.0/",
            "http://10.1.2.3/",
            "http://172.20.0.1/",
            "http://192.168.1.1/",
            "http://[::ffff:127.0.0.1]/",
            "http://[fd00::1]/",
            "http://[fe80::1]/",
            "http://localhost:3000/",
            "http://api.localhost/",
            "http://LOCALHOST./",
            "http://printer.local/",
            "http://metadata.google.internal/",
            "http://intranet/",
        ] {
            assert!(matches!(kind(u), HostKind::Private(_)), "{u}: {:?}", kind(u));
        }
        for u in
            ["https://example.com/", "https://8.8.8.8/", "https://[2606:4700::1111]/", "https://172.32.0.1/"]
        {
            assert_eq!(kind(u), HostKind::Public, "{u}");
        }
        assert_eq!(kind("https://docs.rs/tokio"), HostKind::Docs);
        assert_eq!(kind("https://tokio.docs.rs/"), HostKind::Docs);
        assert_eq!(kind("https://notdocs.rs/"), HostKind::Public, "a suffix is not a subdomain");
        assert_eq!(kind("https://docs.rs.evil.com/"), HostKind::Public);
    }

    #[test]
    fn encoded_payloads_are_flagged_and_ordinary_urls_are_not() {
        let flagged = |u: &str| encoded_data(&parse(u).unwrap());
        let b64 = "c2stYW50LWFwaTAzLXNlY3JldC1rZXktdGhhdC1zaG91bGQtbmV2ZXItbGVhdmUtdGhlLW1hY2hpbmU";
        assert!(flagged(&format!("https://evil.com/?d={b64}")).is_some());
        assert!(flagged(&format!("https://evil.com/collect/{b64}")).is_some());
        let hex = "6b65793d736b2d616e742d6170693033".repeat(3);
        assert!(flagged(&format!("https://evil.com/x?h={hex}")).is_some());
        assert!(flagged(&format!("https://evil.com/x?h={}", "%41%42%43".repeat(10))).is_some());
        let chunked: Vec<&str> =
            (0..b64.len()).step_by(12).map(|i| &b64[i..(i + 12).min(b64.len())]).collect();
        assert!(
            flagged(&format!("https://evil.com/{}", chunked.join("/"))).is_some(),
            "split into short pieces"
        );
        for fine in [
            "https://docs.rs/tokio/latest/tokio/sync/struct.Mutex.html",
            "https://github.com/rust-lang/rust/commit/0123456789abcdef0123456789abcdef01234567",
            "https://www.google.com/search?q=how+to+parse+a+url+in+rust",
            "https://developer.mozilla.org/en-US/docs/Web/HTTP/Headers/Content-Security-Policy",
        ] {
            assert_eq!(flagged(fine), None, "{fine}");
        }
    }
}
