//! Running a server: in this process, over stdio, or over Streamable HTTP.

use rmcp::ServiceExt;

/// What a server must implement to be served here (rmcp's).
pub use rmcp::ServerHandler;

/// Bytes buffered in each direction of an in-process connection.
const IN_PROCESS_BUFFER: usize = 256 * 1024;

/// Starts `server` on a task of the current runtime and returns the client's end of an
/// in-memory connection to it: no process, no socket.
pub fn in_process<S: ServerHandler>(server: S) -> tokio::io::DuplexStream {
    let (client, server_end) = tokio::io::duplex(IN_PROCESS_BUFFER);
    tokio::spawn(async move {
        match server.serve(server_end).await {
            Ok(running) => {
                let _ = running.waiting().await;
            }
            Err(e) => tracing::error!("in-process server failed to start: {e}"),
        }
    });
    client
}

/// Serves `server` on stdin and stdout until the client closes stdin.
pub async fn stdio<S: ServerHandler>(server: S) -> std::io::Result<()> {
    let running = server
        .serve((std_in()?, std_out()?))
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}

type Reader = Box<dyn tokio::io::AsyncRead + Send + Unpin>;
type Writer = Box<dyn tokio::io::AsyncWrite + Send + Unpin>;

/// Stdin, read as the runtime's other sockets and pipes are when it is a pipe or a
/// socket (what an MCP client that starts the server gives it: Python makes pipes,
/// Node sockets). tokio's own stdin reads on a blocking thread instead, a hand-off
/// between threads for every message, which made up most of what the gateway added
/// to a call (docs/BENCHMARKS.md). A terminal or a file gets tokio's.
fn std_in() -> std::io::Result<Reader> {
    use std::os::fd::AsFd;
    let fd = std::io::stdin().as_fd().try_clone_to_owned()?;
    Ok(match Kind::of(&fd)? {
        Kind::Pipe => Box::new(tokio::net::unix::pipe::Receiver::from_file(fd.into())?),
        Kind::Socket => Box::new(socket(fd)?),
        Kind::Other => Box::new(tokio::io::stdin()),
    })
}

/// Stdout, as [`std_in`] reads stdin. Nothing else may write to stdout while it
/// serves: it is then non-blocking.
fn std_out() -> std::io::Result<Writer> {
    use std::os::fd::AsFd;
    let fd = std::io::stdout().as_fd().try_clone_to_owned()?;
    Ok(match Kind::of(&fd)? {
        Kind::Pipe => Box::new(tokio::net::unix::pipe::Sender::from_file(fd.into())?),
        Kind::Socket => Box::new(socket(fd)?),
        Kind::Other => Box::new(tokio::io::stdout()),
    })
}

/// What a standard stream is connected to.
enum Kind {
    Pipe,
    Socket,
    Other,
}

impl Kind {
    fn of(fd: &std::os::fd::OwnedFd) -> std::io::Result<Kind> {
        use std::os::unix::fs::FileTypeExt;
        let file = std::fs::File::from(fd.try_clone()?);
        let kind = file.metadata()?.file_type();
        Ok(if kind.is_fifo() {
            Kind::Pipe
        } else if kind.is_socket() {
            Kind::Socket
        } else {
            Kind::Other
        })
    }
}

fn socket(fd: std::os::fd::OwnedFd) -> std::io::Result<tokio::net::UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(fd);
    stream.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(stream)
}

/// How `serve --http` answers: where, and who may ask.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Bearer tokens; when there are any, every request must carry one that may reach
    /// the path it asks for.
    pub tokens: Vec<Token>,
    /// Host names accepted in the `Host` header (DNS rebinding protection); loopback
    /// names always are.
    pub extra_hosts: Vec<String>,
    /// The largest request body accepted, in bytes; a larger one gets 413.
    pub max_request_size: usize,
    /// Sessions (clients of the dated era) open at once at most, per path; a client
    /// beginning one more gets 503. Idle sessions end after five minutes.
    pub max_sessions: usize,
}

/// A bearer token a client may send.
#[derive(Debug, Clone)]
pub struct Token {
    /// The secret itself.
    pub secret: String,
    /// The one path it reaches (`/mcp/PROFILE`); every path when `None`.
    pub only: Option<String>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            tokens: Vec::new(),
            extra_hosts: Vec::new(),
            max_request_size: DEFAULT_MAX_REQUEST_SIZE,
            max_sessions: DEFAULT_MAX_SESSIONS,
        }
    }
}

/// The largest request body accepted by default: as large as the largest message
/// prise accepts from a server.
pub const DEFAULT_MAX_REQUEST_SIZE: usize = 16 * 1024 * 1024;

/// Sessions open at once by default, per path.
pub const DEFAULT_MAX_SESSIONS: usize = 1024;

/// How long a client may take to send a request's headers.
const HEADER_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Path of the MCP endpoint.
pub const HTTP_PATH: &str = "/mcp";

/// Path that answers `200 ok` to a GET while the server is up, without a token.
pub const HEALTH_PATH: &str = "/healthz";

/// Serves `server` over Streamable HTTP at `/mcp` (and [`HEALTH_PATH`]) on `listener`
/// until `shutdown` resolves. Both protocol eras are served: the dated ones with
/// sessions, 2026-07-28 statelessly. `Host` and `Origin` are checked against loopback
/// names so that a web page cannot reach the server through DNS rebinding.
pub async fn http<S>(
    server: S,
    listener: tokio::net::TcpListener,
    options: HttpOptions,
    shutdown: impl std::future::Future<Output = ()>,
) -> std::io::Result<()>
where
    S: ServerHandler + Clone + Send + Sync + 'static,
{
    http_routes(
        vec![(HTTP_PATH.to_owned(), server)],
        listener,
        options,
        shutdown,
    )
    .await
}

/// [`http`] with one server per path (`/mcp`, `/mcp/readonly`...), each with sessions
/// of its own.
pub async fn http_routes<S>(
    routes: Vec<(String, S)>,
    listener: tokio::net::TcpListener,
    options: HttpOptions,
    shutdown: impl std::future::Future<Output = ()>,
) -> std::io::Result<()>
where
    S: ServerHandler + Clone + Send + Sync + 'static,
{
    use std::collections::HashMap;
    use std::sync::Arc;

    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

    let port = listener.local_addr()?.port();
    let mut hosts = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
        "[::1]".to_owned(),
    ];
    hosts.extend(options.extra_hosts.iter().cloned());
    let origins: Vec<String> = hosts
        .iter()
        .filter(|h| !h.contains(':') || h.starts_with('['))
        .flat_map(|h| [format!("http://{h}:{port}"), format!("https://{h}:{port}")])
        .collect();
    let cancel = tokio_util::sync::CancellationToken::new();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_cancellation_token(cancel.clone());
    type Route<S> = (
        StreamableHttpService<S, LocalSessionManager>,
        Arc<LocalSessionManager>,
    );
    let services: HashMap<String, Route<S>> = routes
        .into_iter()
        .map(|(path, server)| {
            let sessions = Arc::new(LocalSessionManager::default());
            let service = StreamableHttpService::new(
                move || Ok(server.clone()),
                sessions.clone(),
                config.clone(),
            );
            (path, (service, sessions))
        })
        .collect();
    let max_sessions = options.max_sessions;
    let services = Arc::new(services);
    let tokens: Arc<[Token]> = options.tokens.into();
    let max_request_size = options.max_request_size;

    let accept = async {
        loop {
            let (stream, peer) = match listener.accept().await {
                Ok(conn) => conn,
                Err(e) => {
                    // Out of descriptors and the like: wait rather than spin.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            };
            // Responses are small and often written in pieces (SSE events): without
            // TCP_NODELAY, Nagle's algorithm meets the client's delayed ACK and each
            // round trip waits ~40 ms.
            let _ = stream.set_nodelay(true);
            let services = services.clone();
            let tokens = tokens.clone();
            let service =
                hyper::service::service_fn(move |request: http::Request<hyper::body::Incoming>| {
                    let services = services.clone();
                    let tokens = tokens.clone();
                    async move {
                        // For load balancers and orchestrators: up is all it says.
                        if request.uri().path() == HEALTH_PATH {
                            return Ok(plain(http::StatusCode::OK, "ok"));
                        }
                        let path = request.uri().path().to_owned();
                        let Some((mcp, sessions)) = services.get(&path) else {
                            return Ok::<_, std::convert::Infallible>(plain(
                                http::StatusCode::NOT_FOUND,
                                "not found: the MCP endpoint is /mcp",
                            ));
                        };
                        let mut mcp = mcp.clone();
                        // A POST without a session may begin one (initialize); at
                        // 2026-07-28 (which says so in a header) there are none.
                        let stateless = request
                            .headers()
                            .get("mcp-protocol-version")
                            .and_then(|v| v.to_str().ok())
                            .is_some_and(|v| v >= "2026-07-28");
                        if request.method() == http::Method::POST
                            && !stateless
                            && !request.headers().contains_key("mcp-session-id")
                            && sessions.sessions.read().await.len() >= max_sessions
                        {
                            return Ok(plain_with(
                                http::StatusCode::SERVICE_UNAVAILABLE,
                                "too many sessions open; try again later",
                                (http::header::RETRY_AFTER, "5"),
                            ));
                        }
                        if !tokens.is_empty() && !authorized(&request, &tokens, &path) {
                            return Ok(plain_with(
                                http::StatusCode::UNAUTHORIZED,
                                "missing or wrong bearer token",
                                (http::header::WWW_AUTHENTICATE, "Bearer"),
                            ));
                        }
                        let declared = request
                            .headers()
                            .get(http::header::CONTENT_LENGTH)
                            .and_then(|v| v.to_str().ok())
                            .and_then(|v| v.parse::<usize>().ok());
                        if declared.is_some_and(|size| size > max_request_size) {
                            return Ok(plain(
                                http::StatusCode::PAYLOAD_TOO_LARGE,
                                "the request body is over the size limit",
                            ));
                        }
                        // A body sent without a length is cut at the limit as it comes.
                        let mut request = request
                            .map(|body| http_body_util::Limited::new(body, max_request_size));
                        // Where it came from, for a server that accounts per client: rmcp
                        // hands the extensions on (in `http::request::Parts`).
                        request.extensions_mut().insert(peer);
                        Ok(tower_call(&mut mcp, request).await)
                    }
                });
            tokio::spawn(async move {
                let io = hyper_util::rt::TokioIo::new(stream);
                if let Err(e) = hyper::server::conn::http1::Builder::new()
                    .timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(HEADER_READ_TIMEOUT)
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
        () = shutdown => {
            cancel.cancel();
            Ok(())
        }
    }
}

type Body = http_body_util::combinators::BoxBody<bytes::Bytes, std::convert::Infallible>;

async fn tower_call<S, M>(
    mcp: &mut rmcp::transport::StreamableHttpService<S, M>,
    request: http::Request<http_body_util::Limited<hyper::body::Incoming>>,
) -> http::Response<Body>
where
    S: ServerHandler + Send + 'static,
    M: rmcp::transport::streamable_http_server::SessionManager,
{
    match tower_service::Service::call(mcp, request).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

fn plain(status: http::StatusCode, text: &'static str) -> http::Response<Body> {
    use http_body_util::BodyExt;
    let body = http_body_util::Full::new(bytes::Bytes::from_static(text.as_bytes()))
        .map_err(|never| match never {})
        .boxed();
    let mut response = http::Response::new(body);
    *response.status_mut() = status;
    response
}

/// [`plain`] with one header more.
fn plain_with(
    status: http::StatusCode,
    text: &'static str,
    (name, value): (http::HeaderName, &'static str),
) -> http::Response<Body> {
    let mut response = plain(status, text);
    response
        .headers_mut()
        .insert(name, http::HeaderValue::from_static(value));
    response
}

/// Whether the request carries a token that reaches `path`, each compared in constant
/// time so that its bytes cannot be found by timing.
fn authorized<B>(request: &http::Request<B>, tokens: &[Token], path: &str) -> bool {
    let Some(given) = request
        .headers()
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    else {
        return false;
    };
    tokens.iter().any(|token| {
        let same = given.len() == token.secret.len()
            && given
                .bytes()
                .zip(token.secret.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0;
        same && token.only.as_deref().is_none_or(|only| only == path)
    })
}
