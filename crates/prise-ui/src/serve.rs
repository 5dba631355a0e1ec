//! The HTTP side: accepting connections, the guard on every request, routing, and
//! the event stream.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Frame, Incoming};

use crate::api::{self, State};
use crate::assets::{ASSETS, PAGE_CSP};
use crate::guard::Passed;

pub(crate) type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// The largest request body taken (a tool's arguments, an elicitation's answer).
const MAX_BODY: usize = 16 * 1024 * 1024;

/// How often an idle event stream says it is alive, so that proxies and browsers
/// keep it open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

pub(crate) async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<State>,
    shutdown: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    let accept = async {
        loop {
            let (stream, _) = match listener.accept().await {
                Ok(conn) => conn,
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let _ = stream.set_nodelay(true);
            let state = state.clone();
            let service = hyper::service::service_fn(move |request| {
                let state = state.clone();
                async move { Ok::<_, Infallible>(handle(&state, request).await) }
            });
            tokio::spawn(async move {
                let io = hyper_util::rt::TokioIo::new(stream);
                if let Err(e) = hyper::server::conn::http1::Builder::new()
                    .timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(Duration::from_secs(10))
                    .serve_connection(io, service)
                    .await
                {
                    tracing::debug!("connection ended: {e}");
                }
            });
        }
    };
    tokio::select! {
        () = accept => Ok(()),
        () = shutdown => Ok(()),
    }
}

async fn handle(state: &Arc<State>, request: Request<Incoming>) -> Response<Body> {
    let passed = match state.guard.check(&request) {
        Ok(passed) => passed,
        Err(refusal) => {
            tracing::info!(
                "refused {} {}: {}",
                request.method(),
                request.uri().path(),
                refusal.message()
            );
            return text(refusal.status(), refusal.message());
        }
    };
    let path = request.uri().path().to_owned();
    let method = request.method().clone();
    // The token in the address bar is traded for the cookie at once, so that it
    // stays out of the history and of what is shared from the screen.
    if passed == Passed::Query {
        return Response::builder()
            .status(StatusCode::SEE_OTHER)
            .header(header::LOCATION, path.as_str())
            .header(header::SET_COOKIE, state.guard.set_cookie())
            .header(header::CACHE_CONTROL, "no-store")
            .body(empty())
            .expect("a valid response");
    }
    if method == Method::GET {
        if let Some(asset) = ASSETS.iter().find(|a| a.path == path) {
            return Response::builder()
                .header(header::CONTENT_TYPE, asset.mime)
                .header(header::CONTENT_SECURITY_POLICY, PAGE_CSP)
                .header("x-content-type-options", "nosniff")
                .header(header::CACHE_CONTROL, "no-store")
                .body(full(asset.body))
                .expect("a valid response");
        }
        match path.as_str() {
            "/api/events" => return events(state),
            "/api/state" => return json(StatusCode::OK, api::state(state)),
            "/api/sessions" => return json(StatusCode::OK, api::sessions(state)),
            "/app" => return app(state, request.uri().query().unwrap_or_default()).await,
            "/api/search" => {
                let query = query_value(request.uri().query(), "q");
                return json(StatusCode::OK, api::search(state, &query));
            }
            _ => {}
        }
    }
    if method == Method::POST {
        let body = match Limited::new(request.into_body(), MAX_BODY).collect().await {
            Ok(body) => body.to_bytes(),
            Err(_) => {
                return text(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "the request body is too large",
                );
            }
        };
        let body: serde_json::Value = match serde_json::from_slice(&body) {
            Ok(body) => body,
            Err(e) => {
                return text(
                    StatusCode::BAD_REQUEST,
                    &format!("the body is not JSON: {e}"),
                );
            }
        };
        if let Some((status, answer)) = api::post(state, &path, &body).await {
            return json(status, answer);
        }
    }
    text(StatusCode::NOT_FOUND, "not found")
}

/// An MCP App's page, for its sandboxed frame.
async fn app(state: &State, query: &str) -> Response<Body> {
    let tool = query_value(Some(query), "tool");
    match crate::apps::page(&state.mounts, &tool, state.guard.origins()).await {
        Ok(page) => Response::builder()
            .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
            .header(header::CONTENT_SECURITY_POLICY, page.csp)
            .header("x-content-type-options", "nosniff")
            .header(header::CACHE_CONTROL, "no-store")
            .body(full(page.html))
            .expect("a valid response"),
        Err(why) => text(StatusCode::NOT_FOUND, &why),
    }
}

/// Server-sent events: what is kept of the past, then everything as it happens.
fn events(state: &Arc<State>) -> Response<Body> {
    let (past, live) = state.hub.subscribe();
    let open = state.questions.still_open();
    let first: Vec<Result<Frame<Bytes>, Infallible>> = past
        .into_iter()
        .map(|e| Ok(Frame::data(sse(Some(e.id), &e.json))))
        .chain(
            // Questions still open go again, after the past in which they were asked.
            open.into_iter()
                .map(|q| Ok(Frame::data(sse(None, &q.to_string())))),
        )
        .collect();
    let live = futures::stream::unfold(live, |mut live| async move {
        let frame = match tokio::time::timeout(KEEP_ALIVE, live.recv()).await {
            Err(_) => Bytes::from_static(b": alive\n\n"),
            Ok(Ok(event)) => sse(Some(event.id), &event.json),
            Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(skipped))) => sse(
                None,
                &serde_json::json!({"kind": "skipped", "count": skipped}).to_string(),
            ),
            Ok(Err(tokio::sync::broadcast::error::RecvError::Closed)) => return None,
        };
        Some((Ok(Frame::data(frame)), live))
    });
    let stream = futures::StreamExt::chain(futures::stream::iter(first), live);
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-store")
        .body(BodyExt::boxed(StreamBody::new(stream)))
        .expect("a valid response")
}

/// One event of the stream; `id` is its number in the hub, for a person reading it.
fn sse(id: Option<u64>, json: &str) -> Bytes {
    match id {
        Some(id) => Bytes::from(format!("id: {id}\ndata: {json}\n\n")),
        None => Bytes::from(format!("data: {json}\n\n")),
    }
}

/// The value of `name` in a URL's query, decoded; empty when absent.
fn query_value(query: Option<&str>, name: &str) -> String {
    query
        .unwrap_or_default()
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| percent_decoded(value))
        .unwrap_or_default()
}

fn percent_decoded(text: &str) -> String {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let pair = (
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        );
        match (bytes[i], pair) {
            (b'%', (Some(high), Some(low))) => {
                out.push(high << 4 | low);
                i += 3;
            }
            (b'+', _) => {
                out.push(b' ');
                i += 1;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn full(body: impl Into<Bytes>) -> Body {
    BodyExt::boxed(Full::new(body.into()))
}

fn empty() -> Body {
    full(Bytes::new())
}

fn text(status: StatusCode, message: &str) -> Response<Body> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .body(full(message.to_owned()))
        .expect("a valid response")
}

fn json(status: StatusCode, value: serde_json::Value) -> Response<Body> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::CACHE_CONTROL, "no-store")
        .body(full(value.to_string()))
        .expect("a valid response")
}

#[cfg(test)]
mod tests {
    #[test]
    fn percent_decoding() {
        assert_eq!(super::percent_decoded("a%5F_b+c%2"), "a__b c%2");
        assert_eq!(super::percent_decoded("%E2%9C%93"), "✓");
    }
}
