//! Accepting connections: the connection caps (beyond `max_connections` in all, or
//! `max_connections_per_address` from one address, a new connection is closed at once),
//! TLS with rustls (the handshake within the header timeout), hyper's HTTP/1.1 with its header-read timer
//! (which also closes a keep-alive connection idle between requests), the strict-framing watch, and a
//! graceful shutdown bounded by `shutdown_grace`.
//!
//! This loop is the service's own, not `axum-server`'s: that crate serves every connection through
//! hyper-util's protocol sniffing (`serve_connection_with_upgrades`), which ignores `http1_only` and waits for
//! the client's first 24 bytes with no timer, so a connection that sends nothing (or the first bytes of the
//! HTTP/2 preface) would be held forever, past the header timeout (tried: the half-open connections test of
//! `tests/serve_abuse.rs` fails on it). The pieces here are libraries all the same: tokio-rustls, hyper's
//! HTTP/1.1 connection with its header timer, and hyper-util's graceful shutdown.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use super::config::ServeConfig;
use super::routes::{router, ConnInfo};
use super::service::Service;
use super::strict::StrictIo;
use crate::error::{Error, Result};

/// The most header lines a request may have.
const MAX_HEADERS: usize = 64;
/// The most bytes of request headers.
const MAX_HEADER_BYTES: usize = 32 << 10;

/// A bound ingest server, ready to [`run`](Self::run).
pub struct Server {
    listener: TcpListener,
    service: Arc<Service>,
    tls: Option<TlsAcceptor>,
}

/// A handle on a running server: its state, and shutdown.
#[derive(Clone)]
pub struct ServerHandle {
    service: Arc<Service>,
}

impl ServerHandle {
    /// Refuses new uploads (503) from now on; uploads in progress go on to their end.
    pub fn begin_shutdown(&self) {
        self.service.begin_shutdown();
    }

    /// Uploads in progress.
    pub fn active_uploads(&self) -> u64 {
        self.service.active_streams()
    }

    /// Memory reserved by uploads in progress, in bytes.
    pub fn reserved_memory(&self) -> u64 {
        self.service.memory.reserved()
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("addr", &self.listener.local_addr().ok())
            .field("tls", &self.tls.is_some())
            .finish()
    }
}

impl Server {
    /// Checks `config`, loads its TLS files, and binds its address. Must be called inside a Tokio
    /// runtime.
    pub async fn bind(config: ServeConfig) -> Result<Self> {
        config.validate()?;
        let tls = match &config.tls {
            Some((cert, key)) => Some(tls_acceptor(cert, key)?),
            None => None,
        };
        let listener = TcpListener::bind(config.addr)
            .await
            .map_err(|e| Error::Config(format!("cannot listen on {}: {e}", config.addr)))?;
        Ok(Self {
            listener,
            service: Service::new(config),
            tls,
        })
    }

    /// The address it listens on (with the port the system chose, for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .unwrap_or(self.service.config.addr)
    }

    /// A handle for the server's state and shutdown.
    pub fn handle(&self) -> ServerHandle {
        ServerHandle {
            service: self.service.clone(),
        }
    }

    /// Serves until `shutdown` completes, then refuses new uploads and lets those in progress finish within
    /// `shutdown_grace`.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send) -> Result<()> {
        let Server {
            listener,
            service,
            tls,
        } = self;
        let connections = Arc::new(Semaphore::new(service.config.max_connections));
        let per_address = Arc::new(PerAddress {
            open: parking_lot::Mutex::new(HashMap::new()),
            max: service.config.max_connections_per_address,
        });
        let graceful = GracefulShutdown::new();
        let app = router(service.clone());
        let trimmer = tokio::spawn(service.clone().return_memory_when_idle());
        tracing::info!(addr = %listener.local_addr().map_or_else(|_| "?".into(), |a| a.to_string()), tls = tls.is_some(), "listening");
        tokio::pin!(shutdown);
        loop {
            let (stream, peer) = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        // Out of file descriptors and the like: wait a moment rather than spin.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        continue;
                    }
                },
                () = &mut shutdown => break,
            };
            // The address's own cap first, so that an address at its cap takes none of the others' room.
            let trusted = service.config.trusted_proxies.contains(&peer.ip());
            let Some(slot) = per_address.admit(peer.ip(), trusted) else {
                service.metrics.connections_refused.inc();
                drop(stream);
                continue;
            };
            let Ok(permit) = connections.clone().try_acquire_owned() else {
                service.metrics.connections_refused.inc();
                drop(stream);
                continue;
            };
            let service = service.clone();
            let app = app.clone();
            let tls = tls.clone();
            let watcher = graceful.watcher();
            tokio::spawn(async move {
                service.metrics.connections_open.inc();
                serve_connection(stream, peer, tls, app, &service, watcher).await;
                service.metrics.connections_open.dec();
                drop(permit);
                drop(slot);
            });
        }
        drop(listener);
        trimmer.abort();
        service.begin_shutdown();
        tracing::info!(
            active = service.active_streams(),
            "shutting down: no new uploads; waiting for those in progress"
        );
        if tokio::time::timeout(service.config.shutdown_grace, graceful.shutdown())
            .await
            .is_err()
        {
            tracing::warn!(
                active = service.active_streams(),
                "uploads still in progress after the shutdown grace; exiting"
            );
        }
        Ok(())
    }
}

/// The connections open from each address.
struct PerAddress {
    open: parking_lot::Mutex<HashMap<IpAddr, usize>>,
    max: usize,
}

/// One connection's place in its address's count, given back when dropped (`None`: not counted).
struct AddressSlot(Option<(Arc<PerAddress>, IpAddr)>);

impl PerAddress {
    /// A place for a new connection from `ip`, unless the address has its `max` open already (a trusted
    /// proxy's address is never capped).
    fn admit(self: &Arc<Self>, ip: IpAddr, trusted: bool) -> Option<AddressSlot> {
        if trusted {
            return Some(AddressSlot(None));
        }
        let mut open = self.open.lock();
        let count = open.entry(ip).or_insert(0);
        if *count >= self.max {
            return None;
        }
        *count += 1;
        Some(AddressSlot(Some((self.clone(), ip))))
    }
}

impl Drop for AddressSlot {
    fn drop(&mut self) {
        if let Some((table, ip)) = self.0.take() {
            let mut open = table.open.lock();
            if let Some(count) = open.get_mut(&ip) {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    open.remove(&ip);
                }
            }
        }
    }
}

/// Serves one connection to its end.
async fn serve_connection(
    stream: TcpStream,
    peer: SocketAddr,
    tls: Option<TlsAcceptor>,
    app: axum::Router,
    service: &Service,
    watcher: hyper_util::server::graceful::Watcher,
) {
    let _ = stream.set_nodelay(true);
    // The kernel's send buffer grows to megabytes for a client that does not read; bounded, a stream's
    // consumer that stops reading holds little memory, and drops to the latest batch soon.
    let _ = socket2::SockRef::from(&stream).set_send_buffer_size(SEND_BUFFER_BYTES);
    let timeout = service.config.header_timeout;
    match tls {
        None => serve_http(stream, peer, app, service, watcher).await,
        Some(acceptor) => match tokio::time::timeout(timeout, acceptor.accept(stream)).await {
            Ok(Ok(stream)) => serve_http(stream, peer, app, service, watcher).await,
            Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
            Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
        },
    }
}

async fn serve_http<S>(
    stream: S,
    peer: SocketAddr,
    app: axum::Router,
    service: &Service,
    watcher: hyper_util::server::graceful::Watcher,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (io, framing) = StrictIo::new(stream, service.config.send_timeout);
    let requests = Arc::new(AtomicU64::new(0));
    let handler = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        let index = requests.fetch_add(1, Ordering::Relaxed);
        request.extensions_mut().insert(ConnInfo {
            peer,
            framing: framing.clone(),
            index,
        });
        app.clone().oneshot(request.map(axum::body::Body::new))
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(service.config.header_timeout)
        .max_headers(MAX_HEADERS)
        .max_header_size(MAX_HEADER_BYTES)
        // What hyper buffers per connection, each way: a client that stops reading its response (a stream's
        // consumer) holds at most this much of it, not hyper's default of ~400 KiB.
        .max_buf_size(CONNECTION_BUFFER_BYTES)
        .keep_alive(true);
    let connection = builder.serve_connection(TokioIo::new(io), handler);
    if let Err(e) = watcher.watch(connection).await {
        // Header timeouts, resets, malformed requests: the client's doing, logged quietly.
        tracing::debug!(%peer, error = %e, "connection ended with an error");
    }
}

/// The kernel's send buffer of a connection (Linux doubles it for its bookkeeping).
const SEND_BUFFER_BYTES: usize = 64 << 10;

/// The most hyper buffers for one connection, each way.
const CONNECTION_BUFFER_BYTES: usize = 64 << 10;

/// A TLS acceptor from PEM files.
fn tls_acceptor(cert: &std::path::Path, key: &std::path::Path) -> Result<TlsAcceptor> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect())
        .map_err(|e| {
            Error::Config(format!(
                "cannot read the TLS certificate {}: {e}",
                cert.display()
            ))
        })?;
    if certs.is_empty() {
        return Err(Error::Config(format!(
            "the TLS certificate file {} holds no certificate",
            cert.display()
        )));
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| Error::Config(format!("cannot read the TLS key {}: {e}", key.display())))?;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = tokio_rustls::rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_no_client_auth().with_single_cert(certs, key))
        .map_err(|e| Error::Config(format!("the TLS certificate and key cannot be used: {e}")))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_at_its_cap_is_refused_and_others_are_not() {
        let table = Arc::new(PerAddress {
            open: parking_lot::Mutex::new(HashMap::new()),
            max: 2,
        });
        let (a, b): (IpAddr, IpAddr) = ("127.0.0.1".parse().unwrap(), "127.0.0.2".parse().unwrap());
        let first = table.admit(a, false).unwrap();
        let _second = table.admit(a, false).unwrap();
        assert!(table.admit(a, false).is_none());
        let _other = table.admit(b, false).unwrap();
        // A trusted proxy is not counted; a closed connection gives its place back.
        assert!(table.admit(a, true).is_some());
        drop(first);
        assert!(table.admit(a, false).is_some());
        assert!(!table
            .open
            .lock()
            .contains_key(&"127.0.0.9".parse().unwrap()));
    }
}
