//! The router and its middleware: every request gets an id (the `X-Request-Id` response header, and the key
//! of its log lines); a request carrying both `Content-Length` and `Transfer-Encoding` is refused; tokens are
//! checked (all routes but `/health`) and the client key is set for the per-client limit.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::json;

use super::auth::{client_addr, ClientKey};
use super::errors::ApiError;
use super::service::{RequestCtx, Service};
use super::strict::Framing;

/// What the connection knows about a request, set by the listener: the peer, the connection's framing
/// record, and the request's index on its connection.
#[derive(Debug, Clone)]
pub(crate) struct ConnInfo {
    pub(crate) peer: SocketAddr,
    pub(crate) framing: Framing,
    pub(crate) index: u64,
}

/// The routes with their middleware.
pub(crate) fn router(service: Arc<Service>) -> Router {
    Router::new()
        .route("/videos", post(super::upload::post_video))
        .route(
            "/streams",
            post(super::streams::create).get(super::streams::list),
        )
        .route(
            "/streams/{id}",
            get(super::streams::show).delete(super::streams::delete),
        )
        .route("/streams/{id}/batches", get(super::streams::consume))
        .route("/health", get(health))
        .route("/metrics", get(metrics))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(service.clone(), guard))
        .with_state(service)
}

/// Request id, strict framing, authentication and the client key, for every request.
async fn guard(State(service): State<Arc<Service>>, mut request: Request, next: Next) -> Response {
    let id = service.request_id();
    let mut response = match admit_request(&service, &mut request, &id) {
        Ok(()) => next.run(request).await,
        Err(refusal) => service.refuse(refusal, &id),
    };
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert("x-request-id", value);
    }
    response
}

fn admit_request(service: &Service, request: &mut Request, id: &str) -> Result<(), ApiError> {
    let conn = request.extensions().get::<ConnInfo>().cloned();
    let Some(conn) = conn else {
        return Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the request did not come through the server's listener",
        ));
    };
    if conn.framing.conflicting(conn.index) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_request",
            "a request may not carry both Content-Length and Transfer-Encoding",
        ));
    }
    let settings = &service.config;
    let addr = client_addr(conn.peer.ip(), request.headers(), &settings.trusted_proxies);
    let client = match &settings.auth_tokens {
        Some(tokens) if request.uri().path() != "/health" => {
            match tokens.authenticate(request.headers()) {
                Some(name) => ClientKey::Token(name.to_owned()),
                None => {
                    return Err(ApiError::new(
                        StatusCode::UNAUTHORIZED,
                        "unauthorized",
                        "this server needs a valid token: Authorization: Bearer <token>",
                    ))
                }
            }
        }
        _ => ClientKey::Addr(addr),
    };
    tracing::debug!(request_id = id, client = %client, peer = %conn.peer, method = %request.method(), path = request.uri().path(), "request");
    request.extensions_mut().insert(RequestCtx {
        id: id.to_owned(),
        client,
    });
    Ok(())
}

async fn not_found(State(service): State<Arc<Service>>, request: Request) -> Response {
    let id = request
        .extensions()
        .get::<RequestCtx>()
        .map_or_else(String::new, |ctx| ctx.id.clone());
    let refusal = ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        "no such route: POST /videos, POST and GET /streams, GET and DELETE /streams/{id}, GET /streams/{id}/batches, GET /health and GET /metrics are served",
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
