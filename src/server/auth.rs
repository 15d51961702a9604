//! Who a request comes from: bearer tokens (`--auth-tokens FILE`, one `name:token` a line) and the client
//! key the per-client limit counts by (the token's name; else the address a trusted proxy forwarded; else the
//! peer's address).

use std::net::IpAddr;
use std::path::Path;

use axum::http::{header, HeaderMap};
use subtle::ConstantTimeEq;

use crate::error::{Error, Result};

/// The shortest token accepted (a token is a secret: 16 characters at least).
pub const MIN_TOKEN_LEN: usize = 16;

/// The tokens the server accepts, by name.
#[derive(Clone, Default)]
pub struct Tokens {
    entries: Vec<(String, Vec<u8>)>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secrets.
        f.debug_struct("Tokens")
            .field(
                "names",
                &self.entries.iter().map(|e| &e.0).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Tokens {
    /// Reads a tokens file: one `name:token` a line; blank lines and lines starting with `#` are skipped. A
    /// name is 1 to 64 of `A-Z a-z 0-9 _ . -`; a token is at least [`MIN_TOKEN_LEN`] visible ASCII characters
    /// without spaces; names and tokens are unique.
    pub fn from_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Error::Config(format!(
                "cannot read the tokens file {}: {e}",
                path.display()
            ))
        })?;
        Self::parse(&text)
            .map_err(|e| Error::Config(format!("tokens file {}: {e}", path.display())))
    }

    /// Parses the text of a tokens file (see [`from_file`](Self::from_file)).
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        let mut entries: Vec<(String, Vec<u8>)> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = n + 1;
            let (name, token) = line
                .split_once(':')
                .ok_or_else(|| format!("line {at}: expected name:token"))?;
            let name_ok = (1..=64).contains(&name.len())
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
            if !name_ok {
                return Err(format!(
                    "line {at}: the name must be 1 to 64 of A-Z a-z 0-9 _ . -"
                ));
            }
            if token.len() < MIN_TOKEN_LEN || !token.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(format!(
                    "line {at}: the token of '{name}' must be at least {MIN_TOKEN_LEN} visible ASCII characters without spaces"
                ));
            }
            if entries.iter().any(|(other, _)| other == name) {
                return Err(format!("line {at}: the name '{name}' appears twice"));
            }
            if entries.iter().any(|(_, other)| other == token.as_bytes()) {
                return Err(format!("line {at}: the token of '{name}' is used twice"));
            }
            entries.push((name.to_owned(), token.as_bytes().to_vec()));
        }
        if entries.is_empty() {
            return Err("no name:token line".into());
        }
        Ok(Self { entries })
    }

    /// How many tokens there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The name of the token `Authorization: Bearer <token>` carries, if it is one of these. Every token is
    /// compared in constant time.
    pub(crate) fn authenticate(&self, headers: &HeaderMap) -> Option<&str> {
        let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
        let (scheme, token) = value.trim().split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return None;
        }
        let token = token.trim().as_bytes();
        let mut found = None;
        for (name, secret) in &self.entries {
            if bool::from(secret.as_slice().ct_eq(token)) {
                found = Some(name.as_str());
            }
        }
        found
    }
}

/// The client a request is counted against.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum ClientKey {
    /// An authenticated token's name.
    Token(String),
    /// An address: the peer's, or the one a trusted proxy forwarded.
    Addr(IpAddr),
}

impl std::fmt::Display for ClientKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientKey::Token(name) => write!(f, "token:{name}"),
            ClientKey::Addr(ip) => write!(f, "{ip}"),
        }
    }
}

/// The client's address: when the peer is one of `trusted_proxies` and sent `X-Forwarded-For`, the last
/// address there (the one the proxy itself added); otherwise the peer.
pub(crate) fn client_addr(peer: IpAddr, headers: &HeaderMap, trusted_proxies: &[IpAddr]) -> IpAddr {
    if !trusted_proxies.contains(&peer) {
        return peer;
    }
    headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .next_back()
        .and_then(|last| last.trim().parse().ok())
        .unwrap_or(peer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    const FILE: &str = "# clients\nalice:0123456789abcdef\n\nbob.ci:fedcba9876543210XYZ\n";

    fn bearer(token: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
        );
        headers
    }

    #[test]
    fn tokens_are_parsed_and_checked() {
        let tokens = Tokens::parse(FILE).unwrap();
        assert_eq!(tokens.len(), 2);
        assert_eq!(
            tokens.authenticate(&bearer("0123456789abcdef")),
            Some("alice")
        );
        assert_eq!(
            tokens.authenticate(&bearer("fedcba9876543210XYZ")),
            Some("bob.ci")
        );
        assert_eq!(tokens.authenticate(&bearer("0123456789abcdeg")), None);
        assert_eq!(tokens.authenticate(&bearer("0123456789abcde")), None);
        assert_eq!(tokens.authenticate(&HeaderMap::new()), None);
        assert!(
            !format!("{tokens:?}").contains("0123"),
            "Debug shows no secret"
        );
    }

    #[test]
    fn bad_token_files_name_the_line() {
        for (text, expected) in [
            ("alice", "line 1: expected name:token"),
            ("al ice:0123456789abcdef", "line 1: the name"),
            ("alice:short", "line 1: the token of 'alice'"),
            (
                "a:0123456789abcdef\na:0123456789abcdeX",
                "line 2: the name 'a' appears twice",
            ),
            (
                "a:0123456789abcdef\nb:0123456789abcdef",
                "line 2: the token of 'b' is used twice",
            ),
            ("# nothing\n", "no name:token line"),
        ] {
            let err = Tokens::parse(text).unwrap_err();
            assert!(err.contains(expected), "{text:?}: {err}");
        }
    }

    #[test]
    fn forwarded_addresses_count_only_from_a_trusted_proxy() {
        let proxy: IpAddr = "10.0.0.1".parse().unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(
            "x-forwarded-for",
            HeaderValue::from_static("1.2.3.4, 192.0.2.7"),
        );
        assert_eq!(
            client_addr(proxy, &headers, &[proxy]),
            "192.0.2.7".parse::<IpAddr>().unwrap()
        );
        assert_eq!(client_addr(proxy, &headers, &[]), proxy);
        let other: IpAddr = "10.0.0.2".parse().unwrap();
        assert_eq!(client_addr(other, &headers, &[proxy]), other);
        assert_eq!(client_addr(proxy, &HeaderMap::new(), &[proxy]), proxy);
    }
}
