//! The HTTP client the object stores speak through (`store`): the object store crate's own (reqwest over
//! rustls), with one leniency. Some S3-compatible servers (rclone's `serve s3`, and others built on gofakes3)
//! answer a ranged `GET` with status `200` but with exactly the bytes asked for and a `Content-Range` saying
//! so; the object store client, which wants a `206`, would take that for a server that ignores ranges, and
//! the video would be read through. An answer whose `Content-Range` names the very range asked for, with a
//! body of that length, is taken as the `206` it is. A `200` without `Content-Range` (the whole object) is
//! left as it is, and so is every other answer.

use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpRequest, HttpResponse, HttpService, ReqwestConnector,
};
use object_store::ClientOptions;

/// The connector every store framefeed builds is given ([`RangedAnswers`] over reqwest's client).
#[derive(Debug, Default)]
pub(crate) struct Connector;

impl HttpConnector for Connector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        let inner = ReqwestConnector::default().connect(options)?;
        Ok(HttpClient::new(RangedAnswers(inner)))
    }
}

/// An [`HttpClient`] whose `200` answers to ranged requests that carry the range asked for become `206`.
#[derive(Debug)]
struct RangedAnswers(HttpClient);

#[async_trait::async_trait]
impl HttpService for RangedAnswers {
    async fn call(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        let asked = request
            .headers()
            .get(http::header::RANGE)
            .and_then(|v| v.to_str().ok())
            .and_then(asked_range);
        let mut response = self.0.execute(request).await?;
        if let Some(asked) = asked {
            promote(&mut response, asked);
        }
        Ok(response)
    }
}

/// Makes `response` a `206` where it is a `200` carrying exactly `asked` (first and last byte).
fn promote(response: &mut HttpResponse, asked: (u64, Option<u64>)) {
    if response.status() != http::StatusCode::OK {
        return;
    }
    let headers = response.headers();
    let Some((first, last)) = headers
        .get(http::header::CONTENT_RANGE)
        .and_then(|v| v.to_str().ok())
        .and_then(content_range)
    else {
        return;
    };
    let length = headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let fits = first == asked.0
        && asked.1.is_none_or(|end| last == end)
        && length.is_none_or(|n| Some(n) == (last - first).checked_add(1));
    if fits {
        *response.status_mut() = http::StatusCode::PARTIAL_CONTENT;
    }
}

/// The range a request's `Range: bytes=FIRST-[LAST]` header asks for; `None` for any other form (a suffix,
/// several ranges), which is left as the server answers it.
fn asked_range(value: &str) -> Option<(u64, Option<u64>)> {
    let (first, last) = value.trim().strip_prefix("bytes=")?.split_once('-')?;
    let first = first.trim().parse().ok()?;
    let last = last.trim();
    if last.is_empty() {
        return Some((first, None));
    }
    let last: u64 = last.parse().ok()?;
    (last >= first).then_some((first, Some(last)))
}

/// The first and last byte a `Content-Range: bytes FIRST-LAST/SIZE` header names (`SIZE` may be `*`).
fn content_range(value: &str) -> Option<(u64, u64)> {
    let (range, size) = value.trim().strip_prefix("bytes ")?.split_once('/')?;
    let (first, last) = range.split_once('-')?;
    let (first, last): (u64, u64) = (first.trim().parse().ok()?, last.trim().parse().ok()?);
    let size = size.trim();
    let within = size == "*" || size.parse::<u64>().is_ok_and(|size| last < size);
    (first <= last && within).then_some((first, last))
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::client::HttpResponseBody;

    fn answer(status: u16, headers: &[(&str, &str)]) -> HttpResponse {
        let mut builder = http::Response::builder().status(status);
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        builder
            .body(HttpResponseBody::from(bytes::Bytes::new()))
            .unwrap()
    }

    fn promoted(status: u16, headers: &[(&str, &str)], asked: &str) -> u16 {
        let mut response = answer(status, headers);
        if let Some(asked) = asked_range(asked) {
            promote(&mut response, asked);
        }
        response.status().as_u16()
    }

    #[test]
    fn a_200_carrying_the_range_asked_for_is_a_206() {
        let exact = [
            ("content-range", "bytes 1000-1099/100000"),
            ("content-length", "100"),
        ];
        assert_eq!(promoted(200, &exact, "bytes=1000-1099"), 206);
        assert_eq!(promoted(200, &exact[..1], "bytes=1000-1099"), 206);
        assert_eq!(promoted(200, &exact, "bytes=1000-"), 206);
        assert_eq!(
            promoted(200, &[("content-range", "bytes 0-9/*")], "bytes=0-9"),
            206
        );
    }

    #[test]
    fn other_answers_stay_as_the_server_gave_them() {
        // The whole object, without Content-Range: a server that ignores ranges.
        assert_eq!(
            promoted(200, &[("content-length", "100000")], "bytes=1000-1099"),
            200
        );
        // Another range than the one asked for, or a body of another length.
        let other = [("content-range", "bytes 0-99/100000")];
        assert_eq!(promoted(200, &other, "bytes=1000-1099"), 200);
        let longer = [
            ("content-range", "bytes 1000-1099/100000"),
            ("content-length", "100000"),
        ];
        assert_eq!(promoted(200, &longer, "bytes=1000-1099"), 200);
        // A range past the size it names, or garbled.
        for bad in [
            "bytes 1000-1099/1000",
            "bytes 1099-1000/5000",
            "1000-1099/5000",
        ] {
            assert_eq!(
                promoted(200, &[("content-range", bad)], "bytes=1000-1099"),
                200,
                "{bad}"
            );
        }
        // Not a 200, or not a single range asked for.
        let exact = [("content-range", "bytes 1000-1099/100000")];
        assert_eq!(promoted(206, &exact, "bytes=1000-1099"), 206);
        assert_eq!(promoted(404, &exact, "bytes=1000-1099"), 404);
        assert_eq!(promoted(200, &exact, "bytes=-100"), 200);
        assert_eq!(promoted(200, &exact, "bytes=1000-1099,2000-2099"), 200);
    }
}
