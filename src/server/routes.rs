//! The router and its middleware, on tower-http where it has the piece:
//! - every request gets an id of the server's own (`SetRequestIdLayer`; an id a client sends is dropped), which
//!   every response carries back in `X-Request-Id` (`PropagateRequestIdLayer`) and which keys its log lines
//!   (`TraceLayer`, a `request` span with the id, method, path and client);
//! - a request carrying both `Content-Length` and `Transfer-Encoding` is refused (the strict-framing policy,
//!   `strict.rs`);
//! - tokens are checked on all routes but `/health`, and the client key is set for the per-client limit
//!   (`ValidateRequestHeaderLayer` with the service's own check, `auth.rs`);
//! - request bodies are limited per route (`RequestBodyLimitLayer`: a declared length over the limit is a 413
//!   in the service's error format, a body growing past it ends with a `body_too_large` error line).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, MethodRouter};
use axum::Router;
use serde_json::json;
use tower::ServiceBuilder;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::request_id::{
    MakeRequestId, PropagateRequestIdLayer, RequestId, SetRequestIdLayer,
};
use tower_http::trace::TraceLayer;
use tower_http::validate_request::{ValidateRequest, ValidateRequestHeaderLayer};

use super::auth::{client_addr, ClientKey};
use super::errors::ApiError;
use super::requests::BodyLimit;
use super::service::{RequestCtx, Service};
use super::strict::Framing;
use crate::error_code::ErrorCode;

/// What the connection knows about a request, set by the listener: the peer, the connection's framing
/// record, and the request's index on its connection.
#[derive(Debug, Clone)]
pub(crate) struct ConnInfo {
    pub(crate) peer: SocketAddr,
    pub(crate) framing: Framing,
    pub(crate) index: u64,
}

/// The header of request ids.
const REQUEST_ID: &str = "x-request-id";

/// The routes with their middleware.
pub(crate) fn router(service: Arc<Service>) -> Router {
    let max_body = service.config.max_body_bytes;
    let middleware = ServiceBuilder::new()
        // Ids are the server's own: one a client sent would key the server's log lines.
        .map_request(|mut request: Request| {
            request.headers_mut().remove(REQUEST_ID);
            request
        })
        .layer(SetRequestIdLayer::x_request_id(RequestIds::new()))
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(TraceLayer::new_for_http().make_span_with(|request: &Request| {
            let id = request
                .headers()
                .get(REQUEST_ID)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            tracing::debug_span!("request", request_id = id, method = %request.method(), path = request.uri().path(), client = tracing::field::Empty)
        })
        // One line per request, when it is answered (status and latency, at debug); refusals are logged
        // by the service itself (at info), so 5xx answers are not logged twice as failures.
        .on_request(())
        .on_failure(()))
        .layer(middleware::from_fn_with_state(service.clone(), strict_framing))
        .layer(ValidateRequestHeaderLayer::custom(Authenticate {
            service: service.clone(),
        }));
    Router::new()
        .route(
            "/videos",
            body_limit(post(super::upload::post_video), &service, max_body),
        )
        .route(
            "/streams",
            body_limit(
                post(super::streams::create),
                &service,
                super::streams::MAX_REQUEST_BYTES,
            )
            .get(super::streams::list),
        )
        .route(
            "/streams/{id}",
            get(super::streams::show).delete(super::streams::delete),
        )
        .route("/streams/{id}/batches", get(super::streams::consume))
        .route("/mux", get(super::mux::consume_mux))
        .route("/health", get(health))
        .route("/metrics", get(metrics))
        .fallback(not_found)
        .layer(middleware)
        .with_state(service)
}

/// Request ids: this process's prefix and a counter (`5f0c1a2e-00000003`), unique in this process and
/// unlikely to repeat across restarts.
#[derive(Debug, Clone)]
struct RequestIds {
    boot: u32,
    next: Arc<AtomicU64>,
}

impl RequestIds {
    fn new() -> Self {
        let boot = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| {
                d.subsec_nanos() ^ (d.as_secs() as u32).rotate_left(16)
            });
        Self {
            boot,
            next: Arc::new(AtomicU64::new(0)),
        }
    }
}

impl MakeRequestId for RequestIds {
    fn make_request_id<B>(&mut self, _: &axum::http::Request<B>) -> Option<RequestId> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        HeaderValue::from_str(&format!("{:08x}-{n:08x}", self.boot))
            .ok()
            .map(RequestId::new)
    }
}

/// The request's id, as [`SetRequestIdLayer`] set it.
fn request_id<B>(request: &axum::http::Request<B>) -> String {
    request
        .extensions()
        .get::<RequestId>()
        .and_then(|id| id.header_value().to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// The strict-framing policy: a request whose connection showed both `Content-Length` and
/// `Transfer-Encoding` for it is refused.
async fn strict_framing(
    State(service): State<Arc<Service>>,
    request: Request,
    next: Next,
) -> Response {
    let conflicting = match request.extensions().get::<ConnInfo>() {
        Some(conn) => conn.framing.conflicting(conn.index),
        None => {
            let refusal = ApiError::new(
                ErrorCode::Internal,
                "the request did not come through the server's listener",
            );
            return service.refuse(refusal, &request_id(&request));
        }
    };
    if conflicting {
        let refusal = ApiError::new(
            ErrorCode::BadRequest,
            "a request may not carry both Content-Length and Transfer-Encoding",
        );
        return service.refuse(refusal, &request_id(&request));
    }
    next.run(request).await
}

/// The token check (all routes but `/health`, when tokens are set) and the client key of the per-client
/// limit: an authenticated token's name, or the client's address.
#[derive(Clone)]
struct Authenticate {
    service: Arc<Service>,
}

impl<B> ValidateRequest<B> for Authenticate {
    type ResponseBody = Body;

    fn validate(&mut self, request: &mut axum::http::Request<B>) -> Result<(), Response> {
        let id = request_id(request);
        let settings = &self.service.config;
        let peer = request
            .extensions()
            .get::<ConnInfo>()
            .map(|conn| conn.peer.ip());
        let client = match &settings.auth_tokens {
            Some(tokens) if request.uri().path() != "/health" => {
                match tokens.authenticate(request.headers()) {
                    Some(name) => ClientKey::Token(name.to_owned()),
                    None => {
                        let refusal = ApiError::new(
                            ErrorCode::Unauthorized,
                            "this server needs a valid token: Authorization: Bearer <token>",
                        );
                        return Err(self.service.refuse(refusal, &id));
                    }
                }
            }
            _ => match peer {
                Some(peer) => ClientKey::Addr(client_addr(
                    peer,
                    request.headers(),
                    &settings.trusted_proxies,
                )),
                None => ClientKey::Addr(std::net::Ipv4Addr::UNSPECIFIED.into()),
            },
        };
        tracing::Span::current().record("client", tracing::field::display(&client));
        request.extensions_mut().insert(RequestCtx { id, client });
        Ok(())
    }
}

/// A route's body limit: [`RequestBodyLimitLayer`], with its refusal of a declared length over the limit
/// answered in the service's error format (and counted), and the limit told to the handler ([`BodyLimit`]).
fn body_limit(
    route: MethodRouter<Arc<Service>>,
    service: &Arc<Service>,
    limit: u64,
) -> MethodRouter<Arc<Service>> {
    route.layer(
        ServiceBuilder::new()
            .layer(middleware::from_fn_with_state(
                (service.clone(), limit),
                refuse_over_limit,
            ))
            .layer(RequestBodyLimitLayer::new(
                usize::try_from(limit).unwrap_or(usize::MAX),
            )),
    )
}

async fn refuse_over_limit(
    State((service, limit)): State<(Arc<Service>, u64)>,
    mut request: Request,
    next: Next,
) -> Response {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let id = request_id(&request);
    request.extensions_mut().insert(BodyLimit(limit));
    let response = next.run(request).await;
    if response.status() != StatusCode::PAYLOAD_TOO_LARGE {
        return response;
    }
    let message = match declared {
        Some(length) => format!("the request body is {length} bytes; the limit is {limit}"),
        None => format!("the request body is over the limit; the limit is {limit}"),
    };
    let refusal = ApiError::new(ErrorCode::BodyTooLarge, message);
    service.refuse(refusal, &id)
}

async fn not_found(State(service): State<Arc<Service>>, request: Request) -> Response {
    let id = request
        .extensions()
        .get::<RequestCtx>()
        .map_or_else(String::new, |ctx| ctx.id.clone());
    let refusal = ApiError::new(ErrorCode::NotFound, "no such route: POST /videos, POST and GET /streams, GET and DELETE /streams/{id}, GET /streams/{id}/batches, GET /health and GET /metrics are served",
    );
    service.refuse(refusal, &id)
}

async fn health(State(service): State<Arc<Service>>) -> Response {
    let (status, text) = if service.is_shutting_down() {
        (StatusCode::SERVICE_UNAVAILABLE, "shutting down")
    } else {
        (StatusCode::OK, "ok")
    };
    let body = json!({"status": text, "streams_active": service.active_streams()});
    (status, axum::Json(body)).into_response()
}

async fn metrics(State(service): State<Arc<Service>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
        )],
        service.metrics_text(),
    )
        .into_response()
}
