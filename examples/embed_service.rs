//! Embedding the ingest service (`framefeed serve`) in an application: `framefeed::server` binds, serves
//! uploads until a shutdown future completes, and lets uploads in progress finish. Here the application binds
//! a free port on loopback, uploads the built-in sample as a client would, prints each JSON line of the
//! answer (one per batch, then a summary) as it arrives, and shuts the server down.
//!
//! Run: `cargo run --example embed_service --features server`.

use std::time::Duration;

use framefeed::server::{ServeConfig, Server};
use http_body_util::{BodyExt, Full};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut config = ServeConfig::default(); // the settings `framefeed serve` starts with
    config.addr = "127.0.0.1:0".parse()?; // any free port (loopback: no tokens needed)
    config.shutdown_grace = Duration::from_secs(5);
    let server = Server::bind(config).await?;
    let addr = server.local_addr();
    println!("listening on {addr}");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.run(async move {
        let _ = stopped.await; // an application would also wait for Ctrl-C here
    }));

    // A client: one HTTP/1.1 connection (hyper), the video as the request body.
    let stream = tokio::net::TcpStream::connect(addr).await?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    let request = hyper::Request::post("/videos?sequence_length=16&batch_size=2&policy=pad")
        .header("host", addr.to_string())
        .body(Full::new(bytes::Bytes::from_static(framefeed::SAMPLE_MP4)))?;
    let response = sender.send_request(request).await?;
    println!("status {}", response.status());

    // The answer streams: one JSON line per batch as it is decoded, then `{"summary":...}`.
    let (mut body, mut pending) = (response.into_body(), String::new());
    while let Some(frame) = body.frame().await {
        if let Some(data) = frame?.data_ref() {
            pending.push_str(std::str::from_utf8(data)?);
            while let Some(end) = pending.find('\n') {
                let line: String = pending.drain(..=end).collect();
                println!("{}", line.trim_end());
            }
        }
    }

    let _ = stop.send(()); // shutdown: new uploads are refused, those in progress finish
    serving.await??;
    println!("server stopped");
    Ok(())
}
