//! A cap on the size of one message from a stdio server.
//!
//! A server's stdout is read line by line (one JSON-RPC message a line), and a line
//! must not grow without bound. Dropping an oversized line, as rmcp does, leaves the
//! request it answered waiting for its timeout with the cause only in a log. So the
//! server's stdout goes through [`LineLimit`] first: a line past the limit is cut off,
//! and in its place rmcp reads an error answering the same request, which fails at
//! once with [`CallError::TooLarge`](crate::CallError::TooLarge).

use std::collections::HashMap;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// Bytes of each line kept to find its id when the line turns out too long.
const HEAD: usize = 512;
/// Bytes kept of the end of a line being dropped, for the same reason.
const TAIL: usize = 512;
/// The JSON-RPC error code of the stand-in answer (in the range for implementations).
pub(crate) const TOO_LARGE_CODE: i32 = -32099;

/// The requests whose answers were too long: JSON text of the request id → the size
/// of the answer. Filled by [`LineLimit`], read by the mount that made the request, so
/// that a server cannot fake the condition by sending the same error code.
#[derive(Debug, Default)]
pub(crate) struct Oversized(Mutex<HashMap<String, usize>>);

impl Oversized {
    /// The size of the answer to request `id`, if it was too long.
    pub fn take(&self, id: &rmcp::model::RequestId) -> Option<usize> {
        let key = serde_json::to_string(id).ok()?;
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&key)
    }
}

/// A reader that passes lines through up to `max` bytes each.
pub(crate) struct LineLimit<R> {
    inner: R,
    max: usize,
    server: String,
    oversized: Arc<Oversized>,
    /// Bytes of the current line passed on so far.
    line: usize,
    /// The current line's first bytes.
    head: Vec<u8>,
    /// While dropping a line: its size so far and its last bytes.
    dropping: Option<(usize, Vec<u8>)>,
    /// Bytes ready to hand out, in order, from `out_at` on.
    out: Vec<u8>,
    out_at: usize,
    /// Where the next read from `inner` lands.
    scratch: Box<[u8]>,
}

impl<R> LineLimit<R> {
    pub fn new(inner: R, max: usize, server: &str, oversized: Arc<Oversized>) -> LineLimit<R> {
        LineLimit {
            inner,
            max,
            server: server.to_owned(),
            oversized,
            line: 0,
            head: Vec::with_capacity(HEAD),
            dropping: None,
            out: Vec::new(),
            out_at: 0,
            scratch: vec![0; 64 * 1024].into_boxed_slice(),
        }
    }

    /// Queues what passes of `chunk` (just read) in `out`.
    fn filter(&mut self, mut chunk: &[u8]) {
        while !chunk.is_empty() {
            let newline = chunk.iter().position(|&b| b == b'\n');
            let take = newline.map_or(chunk.len(), |i| i + 1);
            let (part, rest) = chunk.split_at(take);
            chunk = rest;
            let ends = newline.is_some();
            if self.dropping.is_none() && self.line + part.len() > self.max {
                // Too long: what fits was passed on and is ended as a line of its own
                // (rmcp skips it as unparsable); the rest is dropped up to the newline.
                let kept = self.max - self.line;
                self.keep_head(&part[..kept]);
                self.out.extend_from_slice(&part[..kept]);
                self.out.push(b'\n');
                self.dropping = Some((self.line + kept, Vec::new()));
                self.drop_part(&part[kept..], ends);
            } else if self.dropping.is_some() {
                self.drop_part(part, ends);
            } else {
                self.keep_head(part);
                self.out.extend_from_slice(part);
                self.line += part.len();
                if ends {
                    self.line = 0;
                    self.head.clear();
                }
            }
        }
    }

    /// Drops `part` of a line that is too long; at its end, queues the stand-in.
    fn drop_part(&mut self, part: &[u8], ends: bool) {
        let Some((size, tail)) = &mut self.dropping else {
            return;
        };
        *size += part.len();
        tail.extend_from_slice(part);
        if tail.len() > 2 * TAIL {
            tail.drain(..tail.len() - TAIL);
        }
        if ends {
            let (size, tail) = self.dropping.take().unwrap_or_default();
            self.stand_in(size, &tail);
            self.line = 0;
            self.head.clear();
        }
    }

    fn keep_head(&mut self, part: &[u8]) {
        let room = HEAD.saturating_sub(self.head.len());
        self.head.extend_from_slice(&part[..part.len().min(room)]);
    }

    /// Queues the error that answers the dropped line's request, when its id is known.
    fn stand_in(&mut self, size: usize, tail: &[u8]) {
        let id = id_in_head(&self.head).or_else(|| id_in_tail(tail));
        tracing::warn!(
            server = %self.server,
            "a message of {size} bytes is over the limit of {} bytes and was dropped{}",
            self.max,
            if id.is_some() { "" } else { " (it answered no request)" }
        );
        let Some(id) = id else { return };
        self.oversized
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.clone(), size);
        let error = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{{\"code\":{TOO_LARGE_CODE},\"message\":\"message too large\"}}}}\n"
        );
        self.out.extend_from_slice(error.as_bytes());
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LineLimit<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        while this.out_at == this.out.len() {
            this.out.clear();
            this.out_at = 0;
            let mut scratch = std::mem::take(&mut this.scratch);
            let mut read_buf = ReadBuf::new(&mut scratch);
            let polled = Pin::new(&mut this.inner).poll_read(cx, &mut read_buf);
            let read = read_buf.filled().len();
            if let Poll::Ready(Ok(())) = polled
                && read > 0
            {
                this.filter(&scratch[..read]);
            }
            this.scratch = scratch;
            match polled {
                Poll::Ready(Ok(())) if read == 0 => return Poll::Ready(Ok(())),
                Poll::Ready(Ok(())) => {}
                other => return other,
            }
        }
        let n = (this.out.len() - this.out_at).min(buf.remaining());
        buf.put_slice(&this.out[this.out_at..this.out_at + n]);
        this.out_at += n;
        Poll::Ready(Ok(()))
    }
}

/// The id of a message whose first bytes are `{"jsonrpc":"2.0","id":7,...` (the
/// order of rmcp and the Python SDK): the `id` member met before any nested value.
fn id_in_head(head: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(head);
    let mut rest = text.trim_start().strip_prefix('{')?;
    loop {
        rest = rest.trim_start();
        let (key, after) = json_string(rest)?;
        rest = after.trim_start().strip_prefix(':')?.trim_start();
        let (value, after) = scalar(rest)?;
        if key == "\"id\"" {
            return Some(value.to_owned());
        }
        rest = after.trim_start().strip_prefix(',')?;
    }
}

/// The id of a message whose last bytes are `...,"jsonrpc":"2.0","id":7}` (the
/// order of the TypeScript SDK): the last member of the outermost object.
fn id_in_tail(tail: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(tail);
    let text = text.trim_end().strip_suffix('}')?.trim_end();
    let start = if let Some(inner) = text.strip_suffix('"') {
        // A string id: back to its opening quote.
        inner.rfind('"')?
    } else {
        text.rfind(|c: char| !(c.is_ascii_digit() || c == '-'))? + 1
    };
    let value = &text[start..];
    let before = text[..start].trim_end().strip_suffix(':')?.trim_end();
    before.strip_suffix("\"id\"")?;
    (!value.is_empty()).then(|| value.to_owned())
}

/// A JSON string at the start of `text` (quotes included) and what follows it.
fn json_string(text: &str) -> Option<(&str, &str)> {
    let bytes = text.as_bytes();
    (bytes.first() == Some(&b'"')).then_some(())?;
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some((&text[..=i], &text[i + 1..])),
            _ => i += 1,
        }
    }
    None
}

/// A string, number, `true`, `false` or `null` at the start of `text`, and what follows.
fn scalar(text: &str) -> Option<(&str, &str)> {
    if text.starts_with('"') {
        return json_string(text);
    }
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '+' || c == '.'))
        .unwrap_or(text.len());
    (end > 0).then(|| text.split_at(end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[test]
    fn ids_at_either_end() {
        assert_eq!(
            id_in_head(br#"{"jsonrpc": "2.0", "id": 7, "result": {"content": [{"t"#),
            Some("7".into())
        );
        assert_eq!(
            id_in_head(br#"{"jsonrpc":"2.0","id":"a\"b","result":{"#),
            Some(r#""a\"b""#.into())
        );
        assert_eq!(id_in_head(br#"{"result": {"id": 3}, "id": 4}"#), None);
        assert_eq!(
            id_in_tail(br#"aaaa"}]},"jsonrpc":"2.0","id":12}"#),
            Some("12".into())
        );
        assert_eq!(
            id_in_tail(br#"aa"}],"id":"x-1"}  "#),
            Some(r#""x-1""#.into())
        );
        assert_eq!(id_in_tail(br#"aa", "other": 5}"#), None);
    }

    async fn through(input: &[u8], max: usize) -> (String, Arc<Oversized>) {
        let oversized = Arc::new(Oversized::default());
        let mut reader = LineLimit::new(input, max, "s", oversized.clone());
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.unwrap();
        (String::from_utf8(out).unwrap(), oversized)
    }

    #[tokio::test]
    async fn long_lines_become_errors_for_their_request() {
        let big = format!(
            r#"{{"jsonrpc":"2.0","id":3,"result":{{"text":"{}"}}}}"#,
            "x".repeat(200)
        );
        let input = format!("{{\"a\":1}}\n{big}\n{{\"b\":2}}\n");
        let (out, oversized) = through(input.as_bytes(), 64).await;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], r#"{"a":1}"#);
        // The cut-off start of the long line, ended: rmcp skips it as unparsable.
        assert!(lines[1].starts_with(r#"{"jsonrpc":"2.0","id":3"#) && lines[1].len() == 64);
        assert_eq!(
            lines[2],
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32099,"message":"message too large"}}"#
        );
        assert_eq!(lines[3], r#"{"b":2}"#);
        assert_eq!(lines.len(), 4);
        let id = rmcp::model::RequestId::Number(3);
        assert_eq!(oversized.take(&id), Some(big.len() + 1));
        assert_eq!(oversized.take(&id), None);
        // Lines at the limit pass whole.
        let (out, _) = through(format!("{}\n", "y".repeat(63)).as_bytes(), 64).await;
        assert_eq!(out.len(), 64);
    }

    #[tokio::test]
    async fn a_long_line_without_a_known_id_is_dropped() {
        let input = format!("{}\n{{\"ok\":1}}\n", "z".repeat(500));
        let (out, _) = through(input.as_bytes(), 64).await;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1], r#"{"ok":1}"#);
    }
}
