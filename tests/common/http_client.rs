//! A minimal HTTP/1.1 client for the ingest server (hyper's connection API over loopback TCP): chunked uploads
//! paced as asked, and GETs. Used by `tests/ingest_load.rs` and `benches/ingest.rs`.
#![allow(dead_code)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::sync::mpsc;

/// An upload in progress: its chunks are sent by a task; `finish` (or dropping the sender) ends the body.
pub struct Upload {
    pub response: tokio::task::JoinHandle<(StatusCode, Vec<Value>)>,
}

/// Starts a chunked POST from `from` (a loopback address) with `chunks` sent `pause` apart. With `hold`, the
/// body is kept open after the chunks until `hold` is dropped or fired (a stalled client).
pub async fn upload(
    addr: SocketAddr,
    from: &str,
    query: &str,
    chunks: Vec<Bytes>,
    pause: Duration,
    hold: Option<tokio::sync::oneshot::Receiver<()>>,
) -> Upload {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    let stream = socket.connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let (tx, rx) = mpsc::channel::<Result<Frame<Bytes>, Infallible>>(2);
    tokio::spawn(async move {
        for chunk in chunks {
            if tx.send(Ok(Frame::data(chunk))).await.is_err() {
                return;
            }
            tokio::time::sleep(pause).await;
        }
        if let Some(hold) = hold {
            let _ = hold.await;
        }
    });
    let body = StreamBody::new(futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|frame| (frame, rx))
    }));
    let request = Request::post(format!("http://{addr}/videos?{query}"))
        .header(hyper::header::HOST, addr.to_string())
        .body(body)
        .unwrap();
    let response = tokio::spawn(async move {
        let response = sender.send_request(request).await.unwrap();
        let status = response.status();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let lines = body
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).expect("each line is JSON"))
            .collect();
        (status, lines)
    });
    Upload { response }
}

pub fn chunks_of(data: &[u8], size: usize) -> Vec<Bytes> {
    data.chunks(size).map(Bytes::copy_from_slice).collect()
}

/// Sends one request with a body known in full (so with a `Content-Length`): (status, body text).
pub async fn send<B>(
    addr: SocketAddr,
    request: hyper::http::request::Builder,
    body: B,
) -> (StatusCode, String)
where
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let request = request
        .header(hyper::header::HOST, addr.to_string())
        .body(body)
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8(body.to_vec()).unwrap())
}

pub async fn get(addr: SocketAddr, path: &str) -> (StatusCode, String) {
    let request = Request::get(format!("http://{addr}{path}"));
    send(addr, request, http_body_util::Empty::<Bytes>::new()).await
}
