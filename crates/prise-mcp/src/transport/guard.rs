//! A guard on each message from a stdio server, before rmcp parses it.
//!
//! A server's stdout is read line by line (one JSON-RPC message a line), and each
//! line is passed on only while it stays within three bounds:
//! - its size: at most the server's `maxMessageSize`;
//! - its text: valid UTF-8, as JSON must be (rmcp drops a line that is not, and the
//!   request it answered would wait for its timeout);
//! - its values: at most one JSON value per [`BYTES_PER_VALUE`] bytes of the size
//!   limit, since parsing costs memory by the value, not by the byte (a 15 MiB
//!   `[1,1,1,...]` took 957 MiB to parse; rmcp parses a message it cannot take
//!   twice). Values are counted by the separators and brackets between them.
//!
//! A line is held until it ends, so that rmcp never parses one out of bounds: a
//! line that breaks a bound is dropped from where it does, and in its place rmcp
//! reads an error answering the same request, which fails at once with the
//! [`CallError`](crate::CallError) that says which bound it broke.

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
/// Room for a line kept between lines; a larger buffer is given back.
const KEPT_ROOM: usize = 1 << 20;
/// The JSON-RPC error code of the stand-in answer (in the range for implementations).
pub(crate) const DROPPED_CODE: i32 = -32099;
/// A message may hold one JSON value per this many bytes of its size limit:
/// 524,288 at 16 MiB. rmcp's parse of that many costs about 100 MiB (measured with
/// `[1,1,...]`, the worst case: some 200 bytes a value).
pub(crate) const BYTES_PER_VALUE: usize = 32;

/// Which bound a dropped line broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dropped {
    /// It was longer than the size limit; `size` is its whole length.
    TooLarge { size: usize },
    /// It was not valid UTF-8.
    NotUtf8,
    /// It held more JSON values than the limit allows (`limit`).
    TooManyValues { limit: usize },
}

/// The requests whose answers were dropped, and why: JSON text of the request id →
/// the bound its answer broke. Filled by [`LineLimit`], read by the mount that made
/// the request, so that a server cannot fake the condition by sending the same
/// error code.
#[derive(Debug, Default)]
pub(crate) struct DroppedAnswers(Mutex<HashMap<String, Dropped>>);

impl DroppedAnswers {
    /// What to parse of `message`, one whole message from a server over HTTP (an
    /// event's data, already text): the message itself while it holds no more
    /// JSON values than `max` bytes allow (see [`BYTES_PER_VALUE`]); else an
    /// error answering its request, the reason noted, or nothing when it answers no
    /// request.
    pub fn screen(&self, message: String, max: usize, server: &str) -> Option<String> {
        let limit = max_values(max);
        if ValueCount::default().count(message.as_bytes()) <= limit {
            return Some(message);
        }
        let bytes = message.as_bytes();
        let id = id_in_head(&bytes[..bytes.len().min(HEAD)])
            .or_else(|| id_in_tail(&bytes[bytes.len().saturating_sub(TAIL)..]));
        tracing::warn!(
            server,
            "a message of {} bytes holds over {limit} JSON values and was dropped{}",
            bytes.len(),
            if id.is_some() {
                ""
            } else {
                " (it answered no request)"
            }
        );
        let id = id?;
        self.note(id.clone(), Dropped::TooManyValues { limit });
        Some(stand_in(&id))
    }

    fn note(&self, id: String, dropped: Dropped) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, dropped);
    }

    /// Why the answer to request `id` was dropped, if it was.
    pub fn take(&self, id: &rmcp::model::RequestId) -> Option<Dropped> {
        let key = serde_json::to_string(id).ok()?;
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&key)
    }
}

/// A reader that passes lines on while they keep within the bounds.
pub(crate) struct LineLimit<R> {
    inner: R,
    max: usize,
    max_values: usize,
    server: String,
    dropped: Arc<DroppedAnswers>,
    /// The current line so far, held until it ends within bounds.
    pending: Vec<u8>,
    /// The current line's first bytes.
    head: Vec<u8>,
    /// The end of what was passed on when it stops inside a UTF-8 sequence.
    carry: Vec<u8>,
    /// The JSON structure of the current line so far.
    values: ValueCount,
    /// While dropping a line: why, its size so far and its last bytes.
    dropping: Option<(Why, usize, Vec<u8>)>,
    /// Bytes ready to hand out, in order, from `out_at` on.
    out: Vec<u8>,
    out_at: usize,
    /// Where the next read from `inner` lands.
    scratch: Box<[u8]>,
}

/// Which bound a line being dropped broke (its size is known at its end).
#[derive(Debug, Clone, Copy)]
enum Why {
    TooLarge,
    NotUtf8,
    TooManyValues,
}

impl<R> LineLimit<R> {
    pub fn new(inner: R, max: usize, server: &str, dropped: Arc<DroppedAnswers>) -> LineLimit<R> {
        LineLimit {
            inner,
            max,
            max_values: max_values(max),
            server: server.to_owned(),
            dropped,
            pending: Vec::new(),
            head: Vec::with_capacity(HEAD),
            carry: Vec::new(),
            values: ValueCount::default(),
            dropping: None,
            out: Vec::new(),
            out_at: 0,
            scratch: vec![0; 64 * 1024].into_boxed_slice(),
        }
    }

    /// Queues what passes of `chunk` (just read) in `out`.
    fn filter(&mut self, mut chunk: &[u8]) {
        while !chunk.is_empty() {
            let newline = memchr::memchr(b'\n', chunk);
            let take = newline.map_or(chunk.len(), |i| i + 1);
            let (part, rest) = chunk.split_at(take);
            chunk = rest;
            let ends = newline.is_some();
            if self.dropping.is_some() {
                self.drop_part(part, ends);
                continue;
            }
            // The id of a line dropped here may be in this part.
            self.keep_head(part);
            let broken = if self.pending.len() + part.len() > self.max {
                Some(Why::TooLarge)
            } else if !self.utf8(part, ends) {
                Some(Why::NotUtf8)
            } else if self.values.count(part) > self.max_values {
                Some(Why::TooManyValues)
            } else {
                None
            };
            match broken {
                None => {
                    self.pending.extend_from_slice(part);
                    if ends {
                        if self.out.is_empty() {
                            std::mem::swap(&mut self.out, &mut self.pending);
                        } else {
                            self.out.append(&mut self.pending);
                        }
                        self.next_line();
                    }
                }
                Some(why) => {
                    let held = std::mem::take(&mut self.pending).len();
                    self.dropping = Some((why, held, Vec::new()));
                    self.drop_part(part, ends);
                }
            }
        }
    }

    /// Whether `part` continues the line as valid UTF-8 (a sequence cut at the end
    /// of a chunk is carried to the next; at the end of the line none may be).
    fn utf8(&mut self, part: &[u8], ends: bool) -> bool {
        let joined;
        let bytes = if self.carry.is_empty() {
            part
        } else {
            joined = [self.carry.as_slice(), part].concat();
            &joined
        };
        match std::str::from_utf8(bytes) {
            Ok(_) => {
                self.carry.clear();
                true
            }
            Err(e) if e.error_len().is_none() && !ends => {
                self.carry = bytes[e.valid_up_to()..].to_vec();
                true
            }
            Err(_) => false,
        }
    }

    fn next_line(&mut self) {
        self.pending.clear();
        // A large line's room is not kept for the small ones that follow.
        if self.pending.capacity() > KEPT_ROOM {
            self.pending = Vec::new();
        }
        self.head.clear();
        self.carry.clear();
        self.values = ValueCount::default();
    }

    /// Drops `part` of a line that broke a bound; at its end, queues the stand-in.
    fn drop_part(&mut self, part: &[u8], ends: bool) {
        let Some((_, size, tail)) = &mut self.dropping else {
            return;
        };
        *size += part.len();
        tail.extend_from_slice(part);
        if tail.len() > 2 * TAIL {
            tail.drain(..tail.len() - TAIL);
        }
        if ends {
            let Some((why, size, tail)) = self.dropping.take() else {
                return;
            };
            self.stand_in(why, size, &tail);
            self.next_line();
        }
    }

    fn keep_head(&mut self, part: &[u8]) {
        let room = HEAD.saturating_sub(self.head.len());
        self.head.extend_from_slice(&part[..part.len().min(room)]);
    }

    /// Queues the error that answers the dropped line's request, when its id is known.
    fn stand_in(&mut self, why: Why, size: usize, tail: &[u8]) {
        let id = id_in_head(&self.head).or_else(|| id_in_tail(tail));
        let (dropped, what) = match why {
            Why::TooLarge => (
                Dropped::TooLarge { size },
                format!("is over the limit of {} bytes", self.max),
            ),
            Why::NotUtf8 => (Dropped::NotUtf8, "is not valid UTF-8".to_owned()),
            Why::TooManyValues => (
                Dropped::TooManyValues {
                    limit: self.max_values,
                },
                format!("holds over {} JSON values", self.max_values),
            ),
        };
        tracing::warn!(
            server = %self.server,
            "a message of {size} bytes {what} and was dropped{}",
            if id.is_some() { "" } else { " (it answered no request)" }
        );
        let Some(id) = id else { return };
        self.dropped.note(id.clone(), dropped);
        self.out.extend_from_slice(stand_in(&id).as_bytes());
        self.out.push(b'\n');
    }
}

/// The most JSON values a message may hold under a size limit of `max` bytes.
fn max_values(max: usize) -> usize {
    (max / BYTES_PER_VALUE).max(1024)
}

/// The error that stands in for a dropped answer to request `id` (its JSON text).
fn stand_in(id: &str) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{{\"code\":{DROPPED_CODE},\"message\":\"message dropped\"}}}}"
    )
}

/// The JSON values of a line so far, counted by what separates and opens them
/// (`,`, `:`, `[`, `{`) outside strings: a bound on how many values parsing it
/// makes, read at the speed of a search for quotes.
#[derive(Debug, Default)]
struct ValueCount {
    in_string: bool,
    escaped: bool,
    values: usize,
}

impl ValueCount {
    /// Counts the values in `part`, the next bytes of the line; the total so far.
    fn count(&mut self, mut part: &[u8]) -> usize {
        while !part.is_empty() {
            if self.escaped {
                self.escaped = false;
                part = &part[1..];
                continue;
            }
            if self.in_string {
                let Some(at) = memchr::memchr2(b'"', b'\\', part) else {
                    return self.values;
                };
                if part[at] == b'"' {
                    self.in_string = false;
                } else {
                    self.escaped = true;
                }
                part = &part[at + 1..];
                continue;
            }
            let at = part
                .iter()
                .position(|&b| matches!(b, b'"' | b',' | b':' | b'[' | b'{'));
            let Some(at) = at else {
                return self.values;
            };
            match part[at] {
                b'"' => self.in_string = true,
                _ => self.values += 1,
            }
            part = &part[at + 1..];
        }
        self.values
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
            if this.out.capacity() > KEPT_ROOM {
                this.out = Vec::new();
            }
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

    async fn through(input: &[u8], max: usize) -> (String, Arc<DroppedAnswers>) {
        let oversized = Arc::new(DroppedAnswers::default());
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
        // Nothing of the long line reaches rmcp: an error for its request instead.
        assert_eq!(
            lines[1],
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32099,"message":"message dropped"}}"#
        );
        assert_eq!(lines[2], r#"{"b":2}"#);
        assert_eq!(lines.len(), 3);
        let id = rmcp::model::RequestId::Number(3);
        assert_eq!(
            oversized.take(&id),
            Some(Dropped::TooLarge {
                size: big.len() + 1
            })
        );
        assert_eq!(oversized.take(&id), None);
        // Lines at the limit pass whole.
        let (out, _) = through(format!("{}\n", "y".repeat(63)).as_bytes(), 64).await;
        assert_eq!(out.len(), 64);
    }

    #[tokio::test]
    async fn lines_of_invalid_utf8_or_too_many_values_become_errors() {
        let mut bad = br#"{"jsonrpc":"2.0","id":5,"result":{"text":""#.to_vec();
        bad.extend_from_slice(b"\xff\xfe");
        bad.extend_from_slice(b"\"}}\n");
        // A character split between two reads is valid.
        let mut split = "{\"id\":6,\"é\":1}\n".as_bytes().to_vec();
        split.extend_from_slice(&bad);
        let (out, dropped) = through(&split, 1 << 20).await;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "{\"id\":6,\"é\":1}");
        assert!(lines[1].contains("\"id\":5,\"error\""), "{out}");
        assert_eq!(lines.len(), 2);
        let id = rmcp::model::RequestId::Number(5);
        assert_eq!(dropped.take(&id), Some(Dropped::NotUtf8));

        // 1 MiB allows 32,768 values; strings count once, whatever they hold.
        let many = format!("{{\"id\":7,\"result\":[{}1]}}\n", "1,".repeat(40_000));
        let text = format!("{{\"id\":8,\"result\":\"{}\"}}\n", ",[{".repeat(40_000));
        let (out, dropped) = through(format!("{many}{text}").as_bytes(), 1 << 20).await;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].contains("\"id\":7,\"error\""));
        assert_eq!(lines[1], text.trim_end());
        let id = rmcp::model::RequestId::Number(7);
        assert_eq!(
            dropped.take(&id),
            Some(Dropped::TooManyValues { limit: 32_768 })
        );
    }

    #[test]
    fn values_are_counted_across_reads_and_outside_strings() {
        let mut count = ValueCount::default();
        count.count(br#"{"a\"[,":[1,"#);
        assert_eq!(count.count(br#"2],"b":{}}"#), 7);
    }

    #[tokio::test]
    async fn a_long_line_without_a_known_id_is_dropped() {
        let input = format!("{}\n{{\"ok\":1}}\n", "z".repeat(500));
        let (out, _) = through(input.as_bytes(), 64).await;
        assert_eq!(out, "{\"ok\":1}\n");
    }
}
