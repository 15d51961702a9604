//! Strict HTTP/1.1 framing. hyper follows RFC 9112 for a request carrying both `Content-Length` and
//! `Transfer-Encoding` (the latter wins, the connection closes after it) and hides the conflict from the
//! handler. Such a request is how request smuggling through a proxy works, so the service refuses it with 400:
//! [`StrictIo`] watches the bytes hyper reads, follows each request's framing (heads, fixed and chunked bodies,
//! trailers) with `httparse`, and records which requests of the connection carried both headers; the handler
//! asks [`Framing::conflicting`] by the request's index on its connection. The same wrapper holds the
//! connection's writes to the send timeout.

use std::collections::BTreeSet;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use parking_lot::Mutex;
use std::future::Future;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// The longest request head followed (hyper refuses longer ones itself).
const MAX_HEAD: usize = 64 << 10;
/// The most headers parsed in a head.
const MAX_HEADERS: usize = 128;

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    /// Reading a request head (bytes so far).
    Head(Vec<u8>),
    /// A fixed-length body: bytes left.
    Body(u64),
    /// A chunk-size line (bytes so far).
    ChunkSize(Vec<u8>),
    /// Chunk data: bytes left, then its CRLF.
    ChunkData(u64),
    /// The CRLF after chunk data: bytes left.
    ChunkEnd(u8),
    /// Trailer lines after the last chunk (the current line so far).
    Trailer(Vec<u8>),
    /// The bytes no longer parse as HTTP/1.1 (hyper answers and closes): nothing more is followed.
    Lost,
}

/// What a connection's bytes said so far.
#[derive(Debug)]
pub(crate) struct Tracker {
    state: State,
    /// Request heads completed on this connection.
    requests: u64,
    /// Indices of the requests that carried both `Content-Length` and `Transfer-Encoding`.
    conflicting: BTreeSet<u64>,
}

impl Default for Tracker {
    fn default() -> Self {
        Self {
            state: State::Head(Vec::new()),
            requests: 0,
            conflicting: BTreeSet::new(),
        }
    }
}

impl Tracker {
    /// Follows `bytes`, the next bytes read from the connection.
    pub(crate) fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let state = std::mem::replace(&mut self.state, State::Lost);
            self.state = match state {
                State::Lost => return,
                State::Head(mut head) => {
                    // A head ends with an empty line; take bytes up to it.
                    let (taken, done) = take_until(&head, bytes, b"\r\n\r\n");
                    head.extend_from_slice(&bytes[..taken]);
                    bytes = &bytes[taken..];
                    if done {
                        self.head_complete(&head)
                    } else if head.len() > MAX_HEAD {
                        State::Lost
                    } else {
                        State::Head(head)
                    }
                }
                State::Body(left) => {
                    let n = left.min(bytes.len() as u64);
                    bytes = &bytes[n as usize..];
                    if n == left {
                        State::Head(Vec::new())
                    } else {
                        State::Body(left - n)
                    }
                }
                State::ChunkSize(mut line) => {
                    let (taken, done) = take_until(&line, bytes, b"\n");
                    line.extend_from_slice(&bytes[..taken]);
                    bytes = &bytes[taken..];
                    if !done {
                        if line.len() > MAX_HEAD {
                            State::Lost
                        } else {
                            State::ChunkSize(line)
                        }
                    } else {
                        match httparse::parse_chunk_size(&line) {
                            Ok(httparse::Status::Complete((_, 0))) => State::Trailer(Vec::new()),
                            Ok(httparse::Status::Complete((_, size))) => State::ChunkData(size),
                            _ => State::Lost,
                        }
                    }
                }
                State::ChunkData(left) => {
                    let n = left.min(bytes.len() as u64);
                    bytes = &bytes[n as usize..];
                    if n == left {
                        State::ChunkEnd(2)
                    } else {
                        State::ChunkData(left - n)
                    }
                }
                State::ChunkEnd(left) => {
                    bytes = &bytes[1..];
                    if left == 1 {
                        State::ChunkSize(Vec::new())
                    } else {
                        State::ChunkEnd(left - 1)
                    }
                }
                State::Trailer(mut line) => {
                    let (taken, done) = take_until(&line, bytes, b"\n");
                    line.extend_from_slice(&bytes[..taken]);
                    bytes = &bytes[taken..];
                    match (done, line.as_slice()) {
                        (true, b"\r\n" | b"\n") => State::Head(Vec::new()),
                        (true, _) => State::Trailer(Vec::new()),
                        (false, _) if line.len() > MAX_HEAD => State::Lost,
                        (false, _) => State::Trailer(line),
                    }
                }
            };
        }
    }

    /// The framing of the body after a complete `head`.
    fn head_complete(&mut self, head: &[u8]) -> State {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut request = httparse::Request::new(&mut headers);
        match request.parse(head) {
            Ok(httparse::Status::Complete(_)) => {}
            _ => return State::Lost,
        }
        let index = self.requests;
        self.requests += 1;
        let mut length = None;
        let mut chunked = false;
        let mut has_te = false;
        for header in request.headers.iter() {
            if header.name.eq_ignore_ascii_case("content-length") {
                length = std::str::from_utf8(header.value)
                    .ok()
                    .and_then(|v| v.trim().parse::<u64>().ok());
                if length.is_none() {
                    return State::Lost;
                }
            } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
                has_te = true;
                chunked = header
                    .value
                    .rsplit(|&b| b == b',')
                    .next()
                    .is_some_and(|last| last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
            }
        }
        if has_te && length.is_some() {
            self.conflicting.insert(index);
        }
        match (has_te, chunked, length) {
            (true, true, _) => State::ChunkSize(Vec::new()),
            (true, false, _) => State::Lost,
            (false, _, Some(n)) if n > 0 => State::Body(n),
            _ => State::Head(Vec::new()),
        }
    }
}

/// How many bytes of `new` to take so that `old + taken` ends at the first `marker`, and whether it does.
fn take_until(old: &[u8], new: &[u8], marker: &[u8]) -> (usize, bool) {
    // The marker may straddle `old` and `new`: look at the tail of `old` with `new`.
    let keep = old.len().min(marker.len() - 1);
    let mut joined = old[old.len() - keep..].to_vec();
    for (i, &b) in new.iter().enumerate() {
        joined.push(b);
        if joined.ends_with(marker) {
            return (i + 1, true);
        }
        if joined.len() > marker.len() {
            joined.remove(0);
        }
    }
    (new.len(), false)
}

/// A connection's framing record, shared by its [`StrictIo`] and its request handler.
#[derive(Debug, Clone, Default)]
pub(crate) struct Framing(Arc<Mutex<Tracker>>);

impl Framing {
    /// Whether request number `index` of the connection (0 first) carried both `Content-Length` and
    /// `Transfer-Encoding`. hyper reads a request's head before it calls the handler for it, so the answer
    /// is known by then.
    pub(crate) fn conflicting(&self, index: u64) -> bool {
        self.0.lock().conflicting.contains(&index)
    }
}

/// A connection's bytes, watched by a [`Framing`] as they are read, and its writes held to a send timeout:
/// a write that the client leaves unaccepted (its socket full: a reader that stopped reading) for
/// `send_timeout` fails the connection, as nginx's `send_timeout` does. Any progress restarts the clock, so a
/// slow reader, or a network pause shorter than the timeout, is never cut.
#[derive(Debug)]
pub(crate) struct StrictIo<S> {
    inner: S,
    framing: Framing,
    send_timeout: Duration,
    /// When the write waiting now fails, if it goes on waiting.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<S> StrictIo<S> {
    pub(crate) fn new(inner: S, send_timeout: Duration) -> (Self, Framing) {
        let framing = Framing::default();
        (
            Self {
                inner,
                framing: framing.clone(),
                send_timeout,
                stalled: None,
            },
            framing,
        )
    }

    /// A write's outcome through the send timeout: progress clears the clock; waiting starts it, or fails
    /// once it has run out.
    fn timed<T>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if polled.is_ready() {
            self.stalled = None;
            return polled;
        }
        let timeout = self.send_timeout;
        let deadline = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        match deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client accepted no bytes within the send timeout",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for StrictIo<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            this.framing.0.lock().feed(&buf.filled()[before..]);
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for StrictIo<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.timed(cx, polled)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_flush(cx);
        this.timed(cx, polled)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.timed(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that stops reading is cut once the send timeout passes with no byte accepted; one that reads,
    /// however slowly, is not.
    #[tokio::test(start_paused = true)]
    async fn a_write_the_client_never_accepts_fails_after_the_send_timeout() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let timeout = Duration::from_secs(60);
        let (near, mut far) = tokio::io::duplex(1024);
        let (mut io, _) = StrictIo::new(near, timeout);
        let chunk = [7u8; 512];
        // A slow reader: a 25 s pause between reads never reaches the timeout.
        for _ in 0..8 {
            io.write_all(&chunk).await.unwrap();
            io.write_all(&chunk).await.unwrap();
            let reading = async {
                tokio::time::sleep(Duration::from_secs(25)).await;
                let mut buf = [0u8; 1024];
                far.read_exact(&mut buf).await.unwrap();
            };
            let writing = io.write_all(&chunk);
            let (_, written) = tokio::join!(reading, writing);
            written.unwrap();
            let mut rest = [0u8; 512];
            far.read_exact(&mut rest).await.unwrap();
        }
        // A reader that stops: the write waits, then fails at the timeout, not before.
        io.write_all(&[0u8; 1024]).await.unwrap();
        let started = tokio::time::Instant::now();
        let err = io.write_all(&chunk).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert!(started.elapsed() >= timeout, "{:?}", started.elapsed());
        drop(far);
    }
    use proptest::prelude::*;

    const STREAM: &[u8] = b"POST /videos HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello\
POST /videos HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\nX-T: 1\r\n\r\n\
POST /videos HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n\
GET /health HTTP/1.1\r\nHost: a\r\n\r\n\
POST /videos HTTP/1.1\r\ntransfer-encoding: gzip, chunked\r\ncontent-length: 0\r\n\r\n0\r\n\r\n\
GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n";

    fn conflicts(tracker: &Tracker) -> Vec<u64> {
        tracker.conflicting.iter().copied().collect()
    }

    #[test]
    fn requests_on_a_keep_alive_connection_are_followed() {
        let mut tracker = Tracker::default();
        tracker.feed(STREAM);
        assert_eq!(tracker.requests, 6);
        assert_eq!(conflicts(&tracker), [2, 4]);
        assert_eq!(tracker.state, State::Head(Vec::new()));
    }

    proptest! {
        /// The bytes may arrive cut anywhere: the record is the same.
        #[test]
        fn any_cutting_of_the_bytes_gives_the_same_record(cuts in proptest::collection::vec(0usize..STREAM.len(), 0..40)) {
            let mut cuts = cuts;
            cuts.push(0);
            cuts.push(STREAM.len());
            cuts.sort_unstable();
            let mut tracker = Tracker::default();
            for pair in cuts.windows(2) {
                tracker.feed(&STREAM[pair[0]..pair[1]]);
            }
            prop_assert_eq!(tracker.requests, 6);
            prop_assert_eq!(conflicts(&tracker), vec![2, 4]);
        }

        /// Whatever the bytes, following them never panics.
        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
            let mut tracker = Tracker::default();
            tracker.feed(&bytes);
        }
    }
}
