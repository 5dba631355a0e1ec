//! The legacy HTTP+SSE transport (protocol 2024-11-05), which rmcp no longer ships:
//! GET an event stream whose first event, `endpoint`, names the URL to POST messages
//! to; the server's messages arrive as `message` events on the stream.

use prise_config::Remote;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use tokio::sync::mpsc;

use std::sync::Arc;

use crate::transport::guard::DroppedAnswers;

/// Messages buffered from the stream before the client reads them.
const BUFFER: usize = 64;
/// Why the SSE transport failed.
#[derive(Debug, thiserror::Error)]
pub enum SseError {
    /// The HTTP request failed.
    #[error("{0}")]
    Http(String),
    /// The server answered a POST with an error status.
    #[error("the server answered HTTP {0} to a message")]
    Status(u16),
}

/// Why the event stream could not be opened, or named no endpoint fit to use.
#[derive(Debug)]
pub(crate) struct Unopened {
    /// What went wrong, in words.
    pub cause: String,
    /// The server's challenge, when it refused for want of a sign-in.
    pub challenge: Option<crate::transport::http::Challenge>,
}

/// A connected legacy SSE transport.
pub(crate) struct LegacySse {
    client: reqwest::Client,
    endpoint: reqwest::Url,
    headers: HeaderMap,
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    reader: tokio::task::JoinHandle<()>,
}

impl LegacySse {
    /// Opens the event stream and waits for its `endpoint` event.
    /// Events larger than `max_event` bytes (the server's `maxMessageSize`) end the
    /// stream rather than being buffered.
    pub async fn connect(
        remote: &Remote,
        client: reqwest::Client,
        max_event: usize,
        dropped: &Arc<DroppedAnswers>,
    ) -> Result<LegacySse, Unopened> {
        let fail = |cause: String| Unopened {
            cause: crate::error::tidy(&cause),
            challenge: None,
        };
        let base = reqwest::Url::parse(&remote.url)
            .map_err(|e| fail(format!("bad url {}: {e}", remote.url)))?;
        let mut headers = HeaderMap::new();
        for (name, value) in &remote.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| fail(format!("{name:?} is not a valid header name")))?;
            let value = HeaderValue::from_str(value)
                .map_err(|_| fail(format!("the value of header {name} is not valid in HTTP")))?;
            headers.insert(name, value);
        }
        let mut response = client
            .get(base.clone())
            .headers(headers.clone())
            .header(ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(|e| fail(format!("cannot connect: {}", crate::net::describe_http(&e))))?;
        if !response.status().is_success() {
            let mut failed = fail(format!(
                "the event stream answered HTTP {}",
                response.status().as_u16()
            ));
            // A server that wants a sign-in says how in its challenge.
            failed.challenge =
                crate::net::challenge_of(&response).map(crate::transport::http::Challenge::SignIn);
            return Err(failed);
        }
        let mut parser = EventParser::new(max_event);
        let endpoint = loop {
            let chunk = response
                .chunk()
                .await
                .map_err(|e| fail(format!("the event stream failed: {e}")))?;
            let Some(chunk) = chunk else {
                return Err(fail(
                    "the event stream ended before its endpoint event".into(),
                ));
            };
            let events = parser.feed(&chunk).map_err(|e| fail(e.to_owned()))?;
            let mut found = None;
            for event in events {
                if event.name == "endpoint" {
                    let endpoint = base
                        .join(event.data.trim())
                        .map_err(|e| fail(format!("bad endpoint {:?}: {e}", event.data)))?;
                    // The server's headers and token are for its origin alone.
                    if endpoint.origin() != base.origin() {
                        return Err(fail(format!(
                            "the event stream named an endpoint at another origin, {}, than the server's, {}: refused, so that its headers and token go nowhere else",
                            endpoint.origin().ascii_serialization(),
                            base.origin().ascii_serialization()
                        )));
                    }
                    found = Some(endpoint);
                }
            }
            if let Some(endpoint) = found {
                break endpoint;
            }
        };
        let (tx, incoming) = mpsc::channel(BUFFER);
        let screen = Screen {
            dropped: dropped.clone(),
            max: max_event,
            server: remote.url.clone(),
        };
        let reader = tokio::spawn(read_messages(response, parser, screen, tx));
        Ok(LegacySse {
            client,
            endpoint,
            headers,
            incoming,
            reader,
        })
    }
}

/// How each message is held to the bound on its JSON values (see
/// [`DroppedAnswers::screen`]).
struct Screen {
    dropped: Arc<DroppedAnswers>,
    max: usize,
    server: String,
}

/// Forwards `message` events until the stream ends or the client goes away.
async fn read_messages(
    mut response: reqwest::Response,
    mut parser: EventParser,
    screen: Screen,
    tx: mpsc::Sender<RxJsonRpcMessage<RoleClient>>,
) {
    loop {
        let chunk = match response.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!("SSE stream failed: {e}");
                return;
            }
        };
        let events = match parser.feed(&chunk) {
            Ok(events) => events,
            Err(e) => {
                tracing::warn!("SSE stream dropped: {e}");
                return;
            }
        };
        for event in events
            .into_iter()
            .filter(|e| e.name == "message" || e.name.is_empty())
        {
            let Some(data) = screen
                .dropped
                .screen(event.data, screen.max, &screen.server)
            else {
                continue;
            };
            match serde_json::from_str(&data) {
                Ok(message) => {
                    if tx.send(message).await.is_err() {
                        return;
                    }
                }
                Err(e) => {
                    tracing::warn!("skipping an SSE event that is not a JSON-RPC message: {e}")
                }
            }
        }
    }
}

impl rmcp::transport::Transport<RoleClient> for LegacySse {
    type Error = SseError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), SseError>> + Send + 'static {
        let request = self
            .client
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json");
        async move {
            let body = serde_json::to_vec(&item).map_err(|e| SseError::Http(e.to_string()))?;
            let response = request
                .body(body)
                .send()
                .await
                .map_err(|e| SseError::Http(e.to_string()))?;
            if response.status().is_success() {
                Ok(())
            } else {
                Err(SseError::Status(response.status().as_u16()))
            }
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), SseError> {
        self.reader.abort();
        Ok(())
    }
}

impl Drop for LegacySse {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Event {
    name: String,
    data: String,
}

/// Incremental `text/event-stream` parsing: bytes in, complete events out. Each
/// byte is looked at once: a chunk is searched for line ends from where the last
/// search stopped, and an event's size is kept as it grows, so a large event costs
/// time in proportion to its size, not to its size times its chunks.
#[derive(Debug)]
struct EventParser {
    /// Bytes of the line not yet complete.
    line: Vec<u8>,
    name: String,
    /// The event's data lines so far, joined with line feeds.
    data: String,
    /// Whether the event has a data line yet (`data` may be empty text).
    has_data: bool,
    /// The most bytes one event may take.
    max: usize,
    /// Bytes looked at for line ends, to show that each is looked at once.
    #[cfg(test)]
    examined: usize,
}

impl EventParser {
    fn new(max: usize) -> EventParser {
        EventParser {
            line: Vec::new(),
            name: String::new(),
            data: String::new(),
            has_data: false,
            max,
            #[cfg(test)]
            examined: 0,
        }
    }

    fn feed(&mut self, mut bytes: &[u8]) -> Result<Vec<Event>, &'static str> {
        let mut events = Vec::new();
        while !bytes.is_empty() {
            let end = memchr::memchr(b'\n', bytes);
            #[cfg(test)]
            {
                self.examined += end.map_or(bytes.len(), |i| i + 1);
            }
            let Some(end) = end else {
                self.line.extend_from_slice(bytes);
                break;
            };
            let (line, rest) = bytes.split_at(end + 1);
            bytes = rest;
            if self.line.is_empty() {
                self.take_line(line, &mut events);
            } else {
                let mut whole = std::mem::take(&mut self.line);
                whole.extend_from_slice(line);
                self.take_line(&whole, &mut events);
            }
        }
        if self.line.len() + self.data.len() > self.max {
            return Err("an event exceeded the server's maxMessageSize");
        }
        Ok(events)
    }

    /// One complete line, with its line end.
    fn take_line(&mut self, line: &[u8], events: &mut Vec<Event>) {
        let line = String::from_utf8_lossy(line);
        let line = line.trim_end_matches(['\n', '\r']);
        if line.is_empty() {
            if self.has_data || !self.name.is_empty() {
                events.push(Event {
                    name: std::mem::take(&mut self.name),
                    data: std::mem::take(&mut self.data),
                });
                self.has_data = false;
            }
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = line
            .split_once(':')
            .map_or((line, ""), |(f, v)| (f, v.strip_prefix(' ').unwrap_or(v)));
        match field {
            "event" => self.name = value.to_owned(),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {} // id and retry: the legacy transport has no resumption
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Event, EventParser};

    #[test]
    fn events_across_chunks() {
        let mut parser = EventParser::new(16 << 20);
        assert_eq!(
            parser
                .feed(b"event: endpoint\r\ndata: /messages?session")
                .unwrap(),
            []
        );
        let events = parser
            .feed(b"Id=1\r\n\r\n: comment\nevent: message\ndata: {\"a\":\ndata: 1}\n\n")
            .unwrap();
        assert_eq!(
            events,
            [
                Event {
                    name: "endpoint".into(),
                    data: "/messages?sessionId=1".into()
                },
                Event {
                    name: "message".into(),
                    data: "{\"a\":\n1}".into()
                }
            ]
        );
    }

    #[test]
    fn each_byte_is_looked_at_once() {
        // A 15 MiB event in 64 KiB chunks, as a server streams it.
        let mut parser = EventParser::new(16 << 20);
        let event = format!("event: message\ndata: {}\n\n", "x".repeat(15 << 20));
        let mut events = Vec::new();
        for chunk in event.as_bytes().chunks(64 << 10) {
            events.extend(parser.feed(chunk).unwrap());
        }
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data.len(), 15 << 20);
        assert_eq!(parser.examined, event.len());
    }

    #[test]
    fn oversized_events_are_refused() {
        let mut parser = EventParser::new(16 << 20);
        let big = vec![b'x'; 17 * 1024 * 1024];
        assert!(parser.feed(b"data: ").is_ok());
        assert!(parser.feed(&big).is_err());
    }
}
