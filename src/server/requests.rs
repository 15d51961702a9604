//! The service's request types, derived with serde (an unknown name is refused: `deny_unknown_fields`), and
//! the two extractors that read them: [`Params`] for a query string and [`JsonBody`] for a JSON body. A
//! refusal is a 400 `bad_request` whose message names the field and what it allows, e.g.
//! `batch_size must be a positive integer, got '-1'` or
//! `unknown query parameter 'bogus'; allowed: sequence_length, batch_size, …`.
//!
//! A field's value is read by a [`Rule`]: from the text of a query value or the JSON value of a body field,
//! checked, with the message that follows the field's name when it is not allowed. Cross-field rules (`id`
//! only with `detach=true`, `resize` or `resize_shorter`) and the operator's own validation come after, where
//! the request is turned into settings (`upload.rs`, `streams.rs`).

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;

use axum::response::Response;
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::errors::ApiError;
use super::service::{RequestCtx, Service};
use crate::error_code::ErrorCode;
use crate::mux::MuxPolicy;
use crate::settings::config::LastSequencePolicy;
use crate::settings::sampling::{ClipPolicy, ClipSampler};
use crate::settings::seconds::seconds_setting;
use crate::settings::url::RtspTransport;
use crate::transform::{CropPosition, DType, ToneMap};

/// How one field's value is read: from `Raw` (a query value's text, or a body field's JSON value) to
/// `Value`, or the message that follows the field's name when the value is not allowed.
pub(crate) trait Rule {
    /// What serde reads first.
    type Raw: DeserializeOwned;
    /// The checked value.
    type Value;
    /// Checks `raw`; an error starting with `must` follows the field's name (`"must be …"`), any other stands
    /// alone (the settings' own messages, which name their setting: `"last_sequence_policy is 'drop';
    /// allowed: …"`).
    fn check(raw: Self::Raw) -> Result<Self::Value, String>;
}

/// A field read by the rule `R`.
pub(crate) struct Field<R: Rule>(pub(crate) R::Value, PhantomData<R>);

impl<R: Rule> Field<R> {
    /// The checked value.
    pub(crate) fn into_inner(self) -> R::Value {
        self.0
    }
}

impl<'de, R: Rule> Deserialize<'de> for Field<R> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = R::Raw::deserialize(deserializer)?;
        R::check(raw)
            .map(|value| Field(value, PhantomData))
            .map_err(D::Error::custom)
    }
}

/// The value of an optional field, checked.
pub(crate) fn value<R: Rule>(field: Option<Field<R>>) -> Option<R::Value> {
    field.map(Field::into_inner)
}

// ---- Rules for query values (text) ----

/// A non-negative integer in a query (`sequence_length=16`).
pub(crate) struct Count;
impl Rule for Count {
    type Raw = String;
    type Value = usize;
    fn check(raw: String) -> Result<usize, String> {
        raw.parse()
            .map_err(|_| format!("must be a positive integer, got '{raw}'"))
    }
}

/// A seed in a query.
pub(crate) struct Seed;
impl Rule for Seed {
    type Raw = String;
    type Value = u64;
    fn check(raw: String) -> Result<u64, String> {
        raw.parse()
            .map_err(|_| format!("must be a non-negative integer, got '{raw}'"))
    }
}

/// A number in a query (`fps=2.5`).
pub(crate) struct Number;
impl Rule for Number {
    type Raw = String;
    type Value = f64;
    fn check(raw: String) -> Result<f64, String> {
        raw.parse()
            .map_err(|_| format!("must be a number, got '{raw}'"))
    }
}

/// `true`/`false` (or `1`/`0`) in a query.
pub(crate) struct Flag;
impl Rule for Flag {
    type Raw = String;
    type Value = bool;
    fn check(raw: String) -> Result<bool, String> {
        match raw.as_str() {
            "true" | "1" => Ok(true),
            "false" | "0" => Ok(false),
            _ => Err(format!("must be 'true' or 'false', got '{raw}'")),
        }
    }
}

/// Frame indices in a query: `I,J,K`.
pub(crate) struct FrameList;
impl Rule for FrameList {
    type Raw = String;
    type Value = Vec<u64>;
    fn check(raw: String) -> Result<Vec<u64>, String> {
        raw.split(',')
            .map(|i| i.trim().parse::<u64>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| format!("must be frame indices separated by commas (I,J,K), got '{raw}'"))
    }
}

/// Seconds to wait in a query, at most `MAX` seconds.
pub(crate) struct WaitSeconds<const MAX: u64>;
impl<const MAX: u64> Rule for WaitSeconds<MAX> {
    type Raw = String;
    type Value = Duration;
    fn check(raw: String) -> Result<Duration, String> {
        raw.parse::<f64>()
            .ok()
            .and_then(|s| seconds_setting("", s).ok())
            .filter(|d| *d <= Duration::from_secs(MAX))
            .ok_or_else(|| format!("must be 0 to {MAX} seconds, got '{raw}'"))
    }
}

/// A choice parsed by its own `FromStr` (whose message names what is allowed), from a query's text or a
/// body's JSON string.
pub(crate) struct Choice<T>(PhantomData<T>);
impl<T: std::str::FromStr<Err = String>> Rule for Choice<T> {
    type Raw = Value;
    type Value = T;
    fn check(raw: Value) -> Result<T, String> {
        match raw {
            Value::String(text) => text.parse(),
            _ => Err("must be a string".into()),
        }
    }
}

/// The last sequence policy, by name.
pub(crate) type Policy = Choice<LastSequencePolicy>;
/// The clip sampler, by name.
pub(crate) type Sampler = Choice<ClipSampler>;
/// What a clip that cannot fit holds, by name.
pub(crate) type FitPolicy = Choice<ClipPolicy>;

// ---- Rules for JSON body values ----

/// A JSON string.
pub(crate) struct Text;
impl Rule for Text {
    type Raw = Value;
    type Value = String;
    fn check(raw: Value) -> Result<String, String> {
        match raw {
            Value::String(text) => Ok(text),
            _ => Err("must be a string".into()),
        }
    }
}

/// A JSON integer from 0 to `MAX`.
pub(crate) struct UpTo<const MAX: u64>;
impl<const MAX: u64> Rule for UpTo<MAX> {
    type Raw = Value;
    type Value = u64;
    fn check(raw: Value) -> Result<u64, String> {
        raw.as_u64()
            .filter(|n| *n <= MAX)
            .ok_or_else(|| format!("must be an integer from 0 to {MAX}"))
    }
}

/// A JSON number of seconds.
pub(crate) struct Seconds;
impl Rule for Seconds {
    type Raw = Value;
    type Value = Duration;
    fn check(raw: Value) -> Result<Duration, String> {
        raw.as_f64()
            .and_then(|s| seconds_setting("", s).ok())
            .ok_or_else(|| "must be a number of seconds".into())
    }
}

/// `[width, height]` in pixels.
pub(crate) struct Size;
impl Rule for Size {
    type Raw = Value;
    type Value = (u32, u32);
    fn check(raw: Value) -> Result<(u32, u32), String> {
        let side = |v: &Value| v.as_u64().and_then(|n| u32::try_from(n).ok());
        match raw.as_array().map(Vec::as_slice) {
            Some([w, h]) => side(w).zip(side(h)),
            _ => None,
        }
        .ok_or_else(|| "must be [width, height] in pixels".into())
    }
}

/// A crop position: a name (`"center"`, `"random"`), `"x,y"`, or `[x, y]`.
pub(crate) struct CropPos;
impl Rule for CropPos {
    type Raw = Value;
    type Value = CropPosition;
    fn check(raw: Value) -> Result<CropPosition, String> {
        let wrong = || "must be \"center\", \"random\" or [x, y]".to_string();
        match &raw {
            // Named (or "x,y"), as every front end parses it.
            Value::String(text) => text.parse(),
            Value::Array(xy) => match xy.as_slice() {
                [x, y] => match (x.as_f64(), y.as_f64()) {
                    (Some(x), Some(y)) => Ok(CropPosition::Fixed {
                        x: x as f32,
                        y: y as f32,
                    }),
                    _ => Err(wrong()),
                },
                _ => Err(wrong()),
            },
            _ => Err(wrong()),
        }
    }
}

/// An RTSP transport, by name.
pub(crate) type Transport = Choice<RtspTransport>;

/// `true` or `false`.
pub(crate) struct Bool;
impl Rule for Bool {
    type Raw = Value;
    type Value = bool;
    fn check(raw: Value) -> Result<bool, String> {
        raw.as_bool().ok_or_else(|| "must be true or false".into())
    }
}

// ---- The requests ----

/// The query of `POST /videos` (see `upload.rs` for what each does).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct UploadParams {
    pub(crate) sequence_length: Option<Field<Count>>,
    pub(crate) batch_size: Option<Field<Count>>,
    pub(crate) last_sequence_policy: Option<Field<Policy>>,
    pub(crate) policy: Option<Field<Policy>>,
    pub(crate) detach: Option<Field<Flag>>,
    pub(crate) id: Option<String>,
    pub(crate) label: Option<String>,
    pub(crate) stride: Option<Field<Count>>,
    pub(crate) step: Option<Field<Count>>,
    pub(crate) fps: Option<Field<Number>>,
    pub(crate) start: Option<Field<Number>>,
    pub(crate) end: Option<Field<Number>>,
    pub(crate) indices: Option<Field<FrameList>>,
    pub(crate) clips: Option<Field<Count>>,
    pub(crate) clip_sampler: Option<Field<Sampler>>,
    pub(crate) clip_policy: Option<Field<FitPolicy>>,
    pub(crate) seed: Option<Field<Seed>>,
    pub(crate) autorotate: Option<Field<Flag>>,
    pub(crate) strict: Option<Field<Flag>>,
    pub(crate) dtype: Option<Field<Choice<DType>>>,
    pub(crate) tonemap: Option<Field<Choice<ToneMap>>>,
    pub(crate) md5: Option<Field<Flag>>,
    pub(crate) audio: Option<Field<Flag>>,
    pub(crate) audio_rate: Option<Field<Count>>,
    pub(crate) audio_channels: Option<Field<Count>>,
}

/// The longest `GET /streams/{id}/batches?wait=S` waits for a stream that does not exist yet, in seconds.
pub(crate) const MAX_WAIT_SECONDS: u64 = 60;

/// The query of `GET /streams/{id}/batches`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConsumeParams {
    pub(crate) wait: Option<Field<WaitSeconds<MAX_WAIT_SECONDS>>>,
}

/// Stream ids in a query: `a,b,c`.
pub(crate) struct IdList;
impl Rule for IdList {
    type Raw = String;
    type Value = Vec<String>;
    fn check(raw: String) -> Result<Vec<String>, String> {
        let ids: Vec<String> = raw.split(',').map(|id| id.trim().to_string()).collect();
        if ids.iter().any(String::is_empty) {
            return Err(format!(
                "must be stream ids separated by commas (a,b,c), got '{raw}'"
            ));
        }
        Ok(ids)
    }
}

/// Milliseconds in a query (`deadline=33`, `deadline=12.5`).
pub(crate) struct Millis;
impl Rule for Millis {
    type Raw = String;
    type Value = Duration;
    fn check(raw: String) -> Result<Duration, String> {
        raw.parse::<f64>()
            .ok()
            .and_then(|ms| seconds_setting("", ms / 1000.0).ok())
            .ok_or_else(|| format!("must be milliseconds, got '{raw}'"))
    }
}

/// The query of `GET /mux` (see `mux.rs` for what each does).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MuxParams {
    pub(crate) streams: Option<Field<IdList>>,
    pub(crate) batch_size: Option<Field<Count>>,
    pub(crate) deadline: Option<Field<Millis>>,
    pub(crate) policy: Option<Field<Choice<MuxPolicy>>>,
    pub(crate) wait: Option<Field<WaitSeconds<MAX_WAIT_SECONDS>>>,
}

/// The JSON body of `POST /streams` (see `streams.rs` for what each does).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StreamBody {
    pub(crate) url: Option<Field<Text>>,
    pub(crate) id: Option<Field<Text>>,
    pub(crate) label: Option<Field<Text>>,
    pub(crate) sequence_length: Option<Field<UpTo<{ u32::MAX as u64 }>>>,
    pub(crate) batch_size: Option<Field<UpTo<{ u32::MAX as u64 }>>>,
    pub(crate) last_sequence_policy: Option<Field<Policy>>,
    pub(crate) policy: Option<Field<Policy>>,
    pub(crate) resize: Option<Field<Size>>,
    pub(crate) resize_shorter: Option<Field<UpTo<{ u32::MAX as u64 }>>>,
    pub(crate) crop: Option<Field<Size>>,
    pub(crate) crop_pos: Option<Field<CropPos>>,
    pub(crate) seed: Option<Field<UpTo<{ u64::MAX }>>>,
    pub(crate) open_timeout: Option<Field<Seconds>>,
    pub(crate) read_timeout: Option<Field<Seconds>>,
    pub(crate) reconnect: Option<Field<UpTo<1000>>>,
    pub(crate) rtsp_transport: Option<Field<Transport>>,
    pub(crate) low_latency: Option<Field<Bool>>,
    pub(crate) autorotate: Option<Field<Bool>>,
    pub(crate) strict: Option<Field<Bool>>,
    pub(crate) dtype: Option<Field<Choice<DType>>>,
    pub(crate) tonemap: Option<Field<Choice<ToneMap>>>,
    pub(crate) md5: Option<Field<Bool>>,
    pub(crate) audio: Option<Field<Bool>>,
    pub(crate) audio_rate: Option<Field<UpTo<{ u32::MAX as u64 }>>>,
    pub(crate) audio_channels: Option<Field<UpTo<{ u32::MAX as u64 }>>>,
}

impl<R: Rule> std::fmt::Debug for Field<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Field")
    }
}

// ---- Messages ----

/// The message of a refused request: `what` names the kind of field (`query parameter`, `field`).
fn message(path: &str, inner: &str, what: &str) -> String {
    // serde's "unknown field `x`, expected one of `a`, `b`" (or "expected `a`"), in the service's words.
    if let Some(rest) = inner.strip_prefix("unknown field `") {
        if let Some((name, allowed)) = rest.split_once("`, expected ") {
            let allowed = allowed.strip_prefix("one of ").unwrap_or(allowed);
            return format!(
                "unknown {what} '{name}'; allowed: {}",
                allowed.replace('`', "")
            );
        }
    }
    if inner.starts_with("must ") && !path.is_empty() && path != "." {
        format!("{path} {inner}")
    } else {
        inner.to_owned()
    }
}

fn bad_request(message: String) -> ApiError {
    ApiError::new(ErrorCode::BadRequest, message)
}

/// Parses a query string into `T`.
pub(crate) fn parse_query<T: DeserializeOwned>(query: &str) -> Result<T, ApiError> {
    let deserializer =
        serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
    serde_path_to_error::deserialize(deserializer).map_err(|e| {
        bad_request(message(
            &e.path().to_string(),
            &e.inner().to_string(),
            "query parameter",
        ))
    })
}

/// Parses a JSON body into `T`; `what` describes what the body must be when it is not an object.
pub(crate) fn parse_json<T: DeserializeOwned>(body: &[u8], what: &str) -> Result<T, ApiError> {
    // serde's derived structs also read arrays (fields by position): a body must be an object.
    if !body.trim_ascii_start().starts_with(b"{") {
        return Err(
            match serde_json::from_slice::<serde::de::IgnoredAny>(body) {
                Ok(_) => bad_request(what.to_owned()),
                Err(e) => bad_request(format!("the body is not JSON: {e}")),
            },
        );
    }
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let parsed: T = serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            return bad_request(format!("the body is not JSON: {inner}"));
        }
        let text = inner.to_string();
        if (path.is_empty() || path == ".") && !text.starts_with("unknown field") {
            // Not an object at all.
            return bad_request(what.to_owned());
        }
        // serde_json adds " at line L column C"; the field's name says where.
        let text = text
            .rsplit_once(" at line ")
            .map_or(text.as_str(), |(m, _)| m);
        bad_request(message(&path, text, "field"))
    })?;
    deserializer
        .end()
        .map_err(|e| bad_request(format!("the body is not JSON: {e}")))?;
    Ok(parsed)
}

/// The request's id, as the router's middleware set it (empty outside the router).
fn request_id(parts: &Parts) -> String {
    parts
        .extensions
        .get::<RequestCtx>()
        .map_or_else(String::new, |ctx| ctx.id.clone())
}

/// Extracts a query string into `T`; a refusal is the service's 400 error line.
pub(crate) struct Params<T>(pub(crate) T);

impl<T: DeserializeOwned> FromRequestParts<Arc<Service>> for Params<T> {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        service: &Arc<Service>,
    ) -> Result<Self, Response> {
        parse_query(parts.uri.query().unwrap_or_default())
            .map(Params)
            .map_err(|refusal| service.refuse(refusal, &request_id(parts)))
    }
}

/// What a [`JsonBody`] must be, said when it is not.
pub(crate) trait Described {
    /// The message for a body that is not a JSON object of this kind.
    const EXPECTED: &'static str;
}

impl Described for StreamBody {
    const EXPECTED: &'static str = "the body must be a JSON object with a \"url\"";
}

/// Extracts a whole JSON body into `T` (within the route's body limit); a refusal is the service's 400
/// error line.
pub(crate) struct JsonBody<T>(pub(crate) T);

impl<T: DeserializeOwned + Described> FromRequest<Arc<Service>> for JsonBody<T> {
    type Rejection = Response;

    async fn from_request(request: Request, service: &Arc<Service>) -> Result<Self, Response> {
        let (parts, body) = request.into_parts();
        let id = request_id(&parts);
        let limit = parts.extensions.get::<BodyLimit>().map_or(0, |l| l.0);
        let bytes = Bytes::from_request(Request::from_parts(parts, body), service)
            .await
            .map_err(|_| {
                bad_request(format!(
                    "the body must be a JSON object of at most {limit} bytes, sent whole"
                ))
            });
        bytes
            .and_then(|bytes| parse_json(&bytes, T::EXPECTED))
            .map(JsonBody)
            .map_err(|refusal| service.refuse(refusal, &id))
    }
}

/// A route's body limit in bytes, set by the router's body-limit layer for the handlers' messages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyLimit(pub(crate) u64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_named_with_what_they_allow() {
        let err = |q: &str| parse_query::<UploadParams>(q).unwrap_err().message;
        assert_eq!(
            err("batch_size=-1"),
            "batch_size must be a positive integer, got '-1'"
        );
        assert_eq!(
            err("policy=drop"),
            "last_sequence_policy is 'drop'; allowed: 'partial', 'pad'"
        );
        assert!(err("bogus=1").starts_with(
            "unknown query parameter 'bogus'; allowed: sequence_length, batch_size, last_sequence_policy"
        ));
        assert_eq!(err("fps=fast"), "fps must be a number, got 'fast'");
        assert_eq!(
            err("indices=1,x"),
            "indices must be frame indices separated by commas (I,J,K), got '1,x'"
        );
        assert_eq!(
            err("detach=yes"),
            "detach must be 'true' or 'false', got 'yes'"
        );
        assert!(err("dtype=int8").starts_with("dtype is 'int8'; allowed: 'uint8', 'uint16'"));
        assert_eq!(
            err("tonemap=hable:param=0.5"),
            "tonemap param is 0.5 for hable; allowed: none (hable takes no param)"
        );
        assert_eq!(
            parse_query::<ConsumeParams>("wait=61").unwrap_err().message,
            "wait must be 0 to 60 seconds, got '61'"
        );
        assert_eq!(
            parse_query::<ConsumeParams>("x=1").unwrap_err().message,
            "unknown query parameter 'x'; allowed: wait"
        );
        let ok = parse_query::<UploadParams>(
            "sequence_length=8&indices=1,%202&detach=1&dtype=float16&tonemap=clip%3Aparam%3D2",
        )
        .unwrap();
        assert_eq!(value(ok.dtype), Some(DType::F16));
        assert_eq!(
            value(ok.tonemap).map(|t| t.to_string()).as_deref(),
            Some("clip:param=2")
        );
        assert_eq!(value(ok.sequence_length), Some(8));
        assert_eq!(value(ok.indices), Some(vec![1, 2]));
        assert_eq!(value(ok.detach), Some(true));
    }

    #[test]
    fn json_fields_are_named_with_what_they_allow() {
        let err = |body: &str| {
            parse_json::<StreamBody>(body.as_bytes(), StreamBody::EXPECTED)
                .unwrap_err()
                .message
        };
        assert_eq!(err("[1]"), StreamBody::EXPECTED);
        assert!(err("{\"url\": ").starts_with("the body is not JSON"));
        assert_eq!(err("{\"url\": 3}"), "url must be a string");
        assert_eq!(
            err("{\"reconnect\": 5000}"),
            "reconnect must be an integer from 0 to 1000"
        );
        assert!(err("{\"bogus\": 1}").starts_with("unknown field 'bogus'; allowed: url, id"));
        assert_eq!(
            err("{} {}"),
            "the body is not JSON: trailing characters at line 1 column 4"
        );
        let ok: StreamBody = parse_json(b"{\"url\": \"rtsp://h/\", \"id\": null}", "").unwrap();
        assert_eq!(value(ok.url).as_deref(), Some("rtsp://h/"));
        assert!(ok.id.is_none());
    }
}
