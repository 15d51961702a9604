//! Which hosts a client may make the service pull from (`POST /streams`): a URL from a client is a
//! server-side request forgery risk, so by default only public addresses are allowed; private, loopback,
//! link-local, shared (CGNAT), multicast, broadcast and unspecified addresses are refused unless listed.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr};
use std::str::FromStr;
use std::time::Duration;

use ipnet::IpNet;

use crate::source::url::{authority, Scheme};

/// The hosts `POST /streams` may pull from: a list of entries, comma-separated in `--allow-hosts`:
/// - `public`: any public address (the default, alone);
/// - an address (`192.168.1.20`, `::1`) or a network (`10.0.0.0/8`, `fd00::/8`);
/// - a host name (`camera.local`): allowed whatever it resolves to.
///
/// A host name not listed is resolved, and every address it resolves to must be allowed.
///
/// ```
/// use framefeed::server::AllowHosts;
/// let hosts: AllowHosts = "public,10.1.0.0/16,cam.local".parse().unwrap();
/// assert!(hosts.allows_ip("10.1.2.3".parse().unwrap()));
/// assert!(!hosts.allows_ip("10.2.0.1".parse().unwrap()));
/// assert!(hosts.allows_ip("8.8.8.8".parse().unwrap()));
/// assert!(!AllowHosts::default().allows_ip("127.0.0.1".parse().unwrap()));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowHosts {
    public: bool,
    networks: Vec<IpNet>,
    names: Vec<String>,
}

impl Default for AllowHosts {
    /// Public addresses only.
    fn default() -> Self {
        Self {
            public: true,
            networks: Vec::new(),
            names: Vec::new(),
        }
    }
}

impl FromStr for AllowHosts {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let mut hosts = Self {
            public: false,
            networks: Vec::new(),
            names: Vec::new(),
        };
        for entry in s.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            if entry.eq_ignore_ascii_case("public") {
                hosts.public = true;
            } else if let Some((addr, bits)) = entry.split_once('/') {
                let addr: IpAddr = addr
                    .parse()
                    .map_err(|_| format!("'{entry}' is not a network (ADDRESS/BITS)"))?;
                let max = if addr.is_ipv4() { 32 } else { 128 };
                let net = bits
                    .parse()
                    .ok()
                    .and_then(|bits| IpNet::new(addr, bits).ok())
                    .ok_or_else(|| format!("'{entry}': the prefix length must be 0 to {max}"))?;
                hosts.networks.push(net);
            } else if let Ok(addr) = entry.trim_matches(['[', ']']).parse::<IpAddr>() {
                hosts.networks.push(IpNet::from(addr));
            } else if is_host_name(entry) {
                hosts.names.push(normalize_name(entry));
            } else {
                return Err(format!(
                    "'{entry}' is not 'public', an address, a network or a host name"
                ));
            }
        }
        if !hosts.public && hosts.networks.is_empty() && hosts.names.is_empty() {
            return Err("the host list is empty; 'public' allows public addresses".into());
        }
        Ok(hosts)
    }
}

impl fmt::Display for AllowHosts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut entries: Vec<String> = Vec::new();
        if self.public {
            entries.push("public".into());
        }
        entries.extend(self.networks.iter().map(IpNet::to_string));
        entries.extend(self.names.iter().cloned());
        f.write_str(&entries.join(","))
    }
}

fn is_host_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.')
            .filter(|l| !l.is_empty())
            .all(|l| l.len() <= 63 && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
}

fn normalize_name(s: &str) -> String {
    s.trim_end_matches('.').to_ascii_lowercase()
}

/// Whether `ip` is an address of the public internet: not private, loopback, link-local, shared (CGNAT),
/// multicast, broadcast, unspecified, documentation or benchmarking space, and for IPv6 not unique-local nor
/// an IPv4-mapped or NAT64 form of such an address.
pub(crate) fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public_v4(v4);
            }
            let s = v6.segments();
            // NAT64 (64:ff9b::/96) embeds an IPv4 address.
            if s[0..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                let [a, b] = s[6].to_be_bytes();
                let [c, d] = s[7].to_be_bytes();
                return is_public_v4(Ipv4Addr::new(a, b, c, d));
            }
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (s[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
                || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated) fec0::/10
                || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
                || s[0..6] == [0, 0, 0, 0, 0, 0]) // IPv4-compatible (deprecated)
        }
    }
}

fn is_public_v4(v4: Ipv4Addr) -> bool {
    let [a, b, c, _] = v4.octets();
    !(v4.is_private()
        || v4.is_loopback()
        || v4.is_link_local()
        || v4.is_broadcast()
        || v4.is_multicast()
        || v4.is_unspecified()
        || v4.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (18..20).contains(&b)) // benchmarking
        || a >= 240) // reserved
}

/// Whether `ip` is in `net` (an IPv4-mapped IPv6 address counts as its IPv4 address).
fn in_network(ip: IpAddr, net: &IpNet) -> bool {
    net.contains(&ip)
        || matches!((ip, net), (IpAddr::V6(v6), IpNet::V4(_)) if v6.to_ipv4_mapped().is_some_and(|v4| net.contains(&IpAddr::V4(v4))))
}

/// The object-store prefixes `POST /streams` may read from (`--allow-remote`, comma-separated): none by default,
/// since the service reads an object store with its own credentials (the environment's, as the clouds' tools
/// read them), which a client's URL would otherwise borrow. Each entry is a bucket or a folder in one,
/// `s3://videos/` or `gs://data/train/`; a URL is allowed when it starts with one, holds no `..` or `.`
/// segment, no empty one, no `%`, `?` or `#`, and names an object below it. The store's endpoint is the
/// server's setting, never the client's, so the host rules ([`AllowHosts`]) do not apply.
///
/// ```
/// use framefeed::server::AllowRemote;
/// let remote: AllowRemote = "s3://videos/train,gs://data/".parse().unwrap();
/// assert!(remote.allows("s3://videos/train/a.mp4"));
/// assert!(!remote.allows("s3://videos/training.mp4"));
/// assert!(!remote.allows("s3://videos/train/../secret.mp4"));
/// assert!(!AllowRemote::default().allows("s3://videos/train/a.mp4"));
/// assert!("http://example.com/".parse::<AllowRemote>().is_err());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowRemote {
    prefixes: Vec<String>,
}

impl FromStr for AllowRemote {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let mut prefixes = Vec::new();
        for entry in s.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let scheme = Scheme::of(entry).filter(|s| Scheme::OBJECT_STORES.contains(s));
            let rest = entry.split_once("://").map(|(_, rest)| rest);
            let (Some(_), Some(rest)) = (scheme, rest) else {
                return Err(format!(
                    "'{entry}' is not an object-store prefix (s3://bucket/, gs://bucket/folder/, az://container/)"
                ));
            };
            let bucket = rest.split('/').next().unwrap_or_default();
            if bucket.is_empty() || !plain_key(rest) {
                return Err(format!(
                    "'{entry}' must name a bucket, then folders without '..', '.', '%', '?' or '#'"
                ));
            }
            let mut prefix = entry.trim_end_matches('/').to_owned();
            prefix.push('/');
            prefixes.push(prefix);
        }
        Ok(Self { prefixes })
    }
}

impl fmt::Display for AllowRemote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.prefixes.join(","))
    }
}

impl AllowRemote {
    /// Whether `url` names an object under one of the prefixes.
    pub fn allows(&self, url: &str) -> bool {
        plain_key(url)
            && self.prefixes.iter().any(|prefix| {
                url.strip_prefix(prefix.as_str())
                    .is_some_and(|key| !key.is_empty() && !key.ends_with('/'))
            })
    }

    /// Whether any prefix is listed.
    pub fn is_empty(&self) -> bool {
        self.prefixes.is_empty()
    }
}

/// Whether the part of an object-store URL after `scheme://` is a plain path: no `%` (an escape could hide a
/// `..`), `?` or `#`, and no `.`, `..` or empty segment past the bucket (a trailing `/` aside).
fn plain_key(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    if rest.contains(['%', '?', '#', '\\']) {
        return false;
    }
    rest.trim_end_matches('/')
        .split('/')
        .all(|s| !s.is_empty() && s != "." && s != "..")
}

/// How long resolving a URL's host name may take.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

impl AllowHosts {
    /// Whether an address is allowed (a listed address or network, or a public address with `public`).
    pub fn allows_ip(&self, ip: IpAddr) -> bool {
        self.networks.iter().any(|n| in_network(ip, n)) || (self.public && is_public(ip))
    }

    /// Checks the host of `url` (a URL the service is asked to pull from), resolving a host name; says why
    /// not.
    pub(crate) async fn check(&self, url: &str, scheme: Scheme) -> Result<(), String> {
        let (host, port) = url_host(url).ok_or_else(|| {
            "the URL must name a host (scheme://host[:port]/...): the service pulls, it does not listen"
                .to_string()
        })?;
        if let Ok(ip) = host.parse::<IpAddr>() {
            return if self.allows_ip(ip) {
                Ok(())
            } else {
                Err(format!(
                    "the host {host} is not allowed (private, loopback, link-local and other non-public addresses are refused unless the server lists them in --allow-hosts)"
                ))
            };
        }
        if !is_host_name(&host) {
            return Err(format!("'{host}' is not a host name"));
        }
        if self.names.contains(&normalize_name(&host)) {
            return Ok(());
        }
        let port = port.unwrap_or(default_port(scheme));
        let resolved = tokio::time::timeout(
            RESOLVE_TIMEOUT,
            tokio::net::lookup_host((host.as_str(), port)),
        )
        .await
        .map_err(|_| format!("resolving {host} took longer than {RESOLVE_TIMEOUT:?}"))?
        .map_err(|e| format!("the host {host} could not be resolved: {e}"))?;
        let mut any = false;
        for addr in resolved {
            any = true;
            if !self.allows_ip(addr.ip()) {
                return Err(format!(
                    "the host {host} resolves to {}, which is not allowed (non-public addresses are refused unless the server lists them in --allow-hosts)",
                    addr.ip()
                ));
            }
        }
        if any {
            Ok(())
        } else {
            Err(format!("the host {host} resolves to no address"))
        }
    }
}

fn default_port(scheme: Scheme) -> u16 {
    match scheme {
        Scheme::Rtsp => 554,
        Scheme::Rtmp => 1935,
        Scheme::Https => 443,
        _ => 80,
    }
}

/// The host (without brackets) and port of `url` as FFmpeg reads them (`source::url::authority`), `None`
/// when it names no host or its port is not a number.
fn url_host(url: &str) -> Option<(String, Option<u16>)> {
    let authority = authority(url)?;
    if authority.host.is_empty() {
        return None;
    }
    let port = match authority.port {
        Some(p) => Some(p.parse().ok()?),
        None => None,
    };
    Some((authority.host.to_ascii_lowercase(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_public_addresses_are_refused_by_default() {
        let hosts = AllowHosts::default();
        for ip in [
            "127.0.0.1",
            "10.0.0.1",
            "172.16.5.4",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a00:1",
        ] {
            assert!(!hosts.allows_ip(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["8.8.8.8", "1.1.1.1", "2606:4700::1111", "::ffff:8.8.8.8"] {
            assert!(hosts.allows_ip(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn listed_addresses_and_networks_are_allowed() {
        let hosts: AllowHosts = "127.0.0.1, 10.0.0.0/8, fd00::/8".parse().unwrap();
        assert!(hosts.allows_ip("127.0.0.1".parse().unwrap()));
        assert!(!hosts.allows_ip("127.0.0.2".parse().unwrap()));
        assert!(hosts.allows_ip("10.200.1.1".parse().unwrap()));
        assert!(hosts.allows_ip("::ffff:10.0.0.1".parse().unwrap()));
        assert!(hosts.allows_ip("fd12::1".parse().unwrap()));
        // Without `public`, public addresses are not allowed either.
        assert!(!hosts.allows_ip("8.8.8.8".parse().unwrap()));
        assert_eq!(hosts.to_string(), "127.0.0.1/32,10.0.0.0/8,fd00::/8");
    }

    #[test]
    fn bad_lists_are_refused_with_the_entry() {
        for (list, expected) in [
            ("", "empty"),
            ("10.0.0.0/33", "0 to 32"),
            ("fd00::/129", "0 to 128"),
            ("x/8", "not a network"),
            ("cam_1!", "not 'public'"),
        ] {
            let err = list.parse::<AllowHosts>().unwrap_err();
            assert!(err.contains(expected), "{list}: {err}");
        }
    }

    #[test]
    fn hosts_are_found_in_urls() {
        for (url, host, port) in [
            ("rtsp://u:p@cam.local:8554/a?x=1", "cam.local", Some(8554)),
            ("srt://10.0.0.1:9000?mode=caller", "10.0.0.1", Some(9000)),
            ("http://[::1]:80/x.m3u8", "::1", Some(80)),
            ("https://Example.COM/live", "example.com", None),
            ("rtmp://h/app/key#f", "h", None),
        ] {
            assert_eq!(url_host(url), Some((host.to_string(), port)), "{url}");
        }
        for url in [
            "srt://:9000?mode=listener",
            "rtsp:///x",
            "http://h:port/",
            "x",
        ] {
            assert_eq!(url_host(url), None, "{url}");
        }
    }

    #[tokio::test]
    async fn urls_are_checked_with_their_hosts_resolved() {
        let hosts = AllowHosts::default();
        let err = hosts
            .check("rtsp://127.0.0.1:8554/cam", Scheme::Rtsp)
            .await
            .unwrap_err();
        assert!(err.contains("not allowed"), "{err}");
        let err = hosts
            .check("http://localhost/x", Scheme::Http)
            .await
            .unwrap_err();
        assert!(
            err.contains("resolves to") || err.contains("resolved"),
            "{err}"
        );
        let err = hosts
            .check("srt://:9000?mode=listener", Scheme::Srt)
            .await
            .unwrap_err();
        assert!(err.contains("must name a host"), "{err}");
        let listed: AllowHosts = "localhost".parse().unwrap();
        assert!(listed
            .check("http://LOCALHOST./x", Scheme::Http)
            .await
            .is_ok());
        let loopback: AllowHosts = "127.0.0.0/8,::1".parse().unwrap();
        assert!(loopback
            .check("http://localhost/x", Scheme::Http)
            .await
            .is_ok());
    }
}
