//! The person's part of a sign-in on this machine: their browser is sent to the
//! authorization server and comes back to a listener on 127.0.0.1 (the loopback
//! redirect of RFC 8252 §7.3, which the MCP authorization spec asks native clients to
//! use). How the person is sent there is the caller's ([`Show`]): a terminal opens a
//! browser and prints the URL; a web page would show a link.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::{BoxFuture, PersonError, Return, SignIn};

/// How long a sign-in waits for the person to come back.
pub const SIGN_IN_WAIT: Duration = Duration::from_secs(300);
/// The most of a request the listener reads: the request line and headers of a
/// browser's GET are a few KiB.
const MAX_REQUEST: usize = 16 * 1024;
/// How long one connection may take to send its request.
const REQUEST_WAIT: Duration = Duration::from_secs(10);
/// Where the browser comes back to.
const CALLBACK_PATH: &str = "/callback";

/// Sends the person to the authorization server.
pub trait Show: Send + Sync + std::fmt::Debug {
    /// Sends the person to `url` to sign in to `server`. The future resolves with a
    /// URL the person pasted instead (the address their browser ended on when it
    /// could not reach this machine, as over SSH), or never.
    fn show(&self, server: &str, url: &str) -> BoxFuture<'static, Option<String>>;

    /// Shows the person a code to enter at an address, to sign in to `server` from
    /// another device (the device flow).
    fn show_code(&self, server: &str, code: &super::device::DeviceCode);
}

/// A [`SignIn`] that listens on 127.0.0.1 for the browser's return.
#[derive(Debug, Clone)]
pub struct Loopback {
    show: Arc<dyn Show>,
}

impl Loopback {
    /// Sign-ins that send the person on with `show`.
    pub fn new(show: Arc<dyn Show>) -> Loopback {
        Loopback { show }
    }
}

impl SignIn for Loopback {
    fn show_code(&self, server: &str, code: &super::device::DeviceCode) -> Result<(), PersonError> {
        self.show.show_code(server, code);
        Ok(())
    }

    fn listen(&self, port: Option<u16>) -> BoxFuture<'_, Result<Box<dyn Return>, PersonError>> {
        Box::pin(async move {
            let listener = TcpListener::bind(("127.0.0.1", port.unwrap_or(0)))
                .await
                .map_err(|e| match port {
                    Some(port) => format!(
                        "cannot listen on 127.0.0.1:{port} for the browser's return ({e}): free the port or change \"callbackPort\""
                    ),
                    None => format!("cannot listen on 127.0.0.1 for the browser's return: {e}"),
                })?;
            let port = listener.local_addr().map_err(|e| e.to_string())?.port();
            Ok(Box::new(Waiting {
                listener,
                port,
                show: self.show.clone(),
            }) as Box<dyn Return>)
        })
    }
}

/// A listener waiting for the browser.
struct Waiting {
    listener: TcpListener,
    port: u16,
    show: Arc<dyn Show>,
}

impl Return for Waiting {
    fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{CALLBACK_PATH}", self.port)
    }

    fn visit(
        self: Box<Self>,
        server: String,
        url: String,
    ) -> BoxFuture<'static, Result<String, PersonError>> {
        Box::pin(async move {
            let pasted = self.show.show(&server, &url);
            let base = format!("http://127.0.0.1:{}", self.port);
            tokio::select! {
                back = came_back(&self.listener, &server) => back
                    .map(|target| format!("{base}{target}"))
                    .map_err(PersonError),
                Some(pasted) = pasted => Ok(pasted.trim().to_owned()),
                () = tokio::time::sleep(SIGN_IN_WAIT) => Err(PersonError(format!(
                    "gave up waiting for the sign-in to {server} after {} minutes",
                    SIGN_IN_WAIT.as_secs() / 60
                ))),
            }
        })
    }
}

/// The request target (`/callback?code=…&state=…`) the browser came back with.
/// Other requests (a favicon, a port scan) are answered 404 and waited past.
async fn came_back(listener: &TcpListener, server: &str) -> Result<String, String> {
    loop {
        let (mut stream, _) = listener
            .accept()
            .await
            .map_err(|e| format!("waiting for the browser's return failed: {e}"))?;
        let Ok(Some(target)) = tokio::time::timeout(REQUEST_WAIT, request_target(&mut stream))
            .await
            .unwrap_or(Ok(None))
        else {
            continue;
        };
        if target.split('?').next() != Some(CALLBACK_PATH) {
            let _ = respond(&mut stream, "404 Not Found", "Not found.").await;
            continue;
        }
        let page = if target.contains("error=") {
            format!(
                "The sign-in to {} did not complete. prise says why in the terminal.",
                escape(server)
            )
        } else {
            format!(
                "Signed in to {}. You can close this tab and go back to prise.",
                escape(server)
            )
        };
        let _ = respond(&mut stream, "200 OK", &page).await;
        return Ok(target);
    }
}

/// The target of a GET request read from `stream`, or `None` for anything else.
async fn request_target(stream: &mut TcpStream) -> std::io::Result<Option<String>> {
    let mut request = Vec::new();
    let mut chunk = [0u8; 2048];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
        let read = stream.read(&mut chunk).await?;
        if read == 0 || request.len() + read > MAX_REQUEST {
            return Ok(None);
        }
        request.extend_from_slice(&chunk[..read]);
    }
    let text = String::from_utf8_lossy(&request);
    let mut words = text.lines().next().unwrap_or_default().split(' ');
    Ok(match (words.next(), words.next()) {
        (Some("GET"), Some(target)) if target.starts_with('/') => Some(target.to_owned()),
        _ => None,
    })
}

async fn respond(stream: &mut TcpStream, status: &str, text: &str) -> std::io::Result<()> {
    let body = format!(
        "<!doctype html><meta charset=utf-8><title>prise</title><p style=\"font:16px system-ui;margin:3em\">{text}</p>"
    );
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

/// A server's name as HTML text.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shows nothing and never pastes.
    #[derive(Debug)]
    struct Nowhere;

    impl Show for Nowhere {
        fn show(&self, _: &str, _: &str) -> BoxFuture<'static, Option<String>> {
            Box::pin(std::future::pending())
        }

        fn show_code(&self, _: &str, _: &crate::auth::device::DeviceCode) {}
    }

    async fn get(port: u16, target: &str) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let request = format!("GET {target} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        answer
    }

    #[tokio::test]
    async fn the_callback_is_handed_back_and_other_requests_are_waited_past() {
        let back = Loopback::new(Arc::new(Nowhere)).listen(None).await.unwrap();
        let uri = back.redirect_uri();
        let port: u16 = uri
            .trim_start_matches("http://127.0.0.1:")
            .trim_end_matches(CALLBACK_PATH)
            .parse()
            .unwrap();
        let visit =
            tokio::spawn(back.visit("<docs>".into(), "https://as.example/authorize".into()));
        assert!(get(port, "/favicon.ico").await.starts_with("HTTP/1.1 404"));
        let page = get(port, "/callback?code=abc&state=xyz").await;
        assert!(page.starts_with("HTTP/1.1 200"), "{page}");
        assert!(page.contains("Signed in to &lt;docs&gt;"), "{page}");
        let url = visit.await.unwrap().unwrap();
        assert_eq!(
            url,
            format!("http://127.0.0.1:{port}/callback?code=abc&state=xyz")
        );
    }

    #[tokio::test]
    async fn a_taken_port_names_the_setting_to_change() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let Err(error) = Loopback::new(Arc::new(Nowhere)).listen(Some(port)).await else {
            panic!("listened on a taken port");
        };
        let error = error.to_string();
        assert!(
            error.contains(&format!("127.0.0.1:{port}")) && error.contains("callbackPort"),
            "{error}"
        );
    }
}
