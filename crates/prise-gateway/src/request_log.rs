//! One JSON line per request the gateway forwards to a server: when, which client
//! (its name, as it gave it), which server, the method and the name it carried, how
//! long it took and how it ended.

use std::io::Write;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use serde_json::json;

/// Where the lines go: a file, stderr.
pub struct RequestLog(Mutex<Box<dyn Write + Send>>);

impl std::fmt::Debug for RequestLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestLog").finish_non_exhaustive()
    }
}

impl RequestLog {
    /// A log written to `to`, a line per request, flushed each time.
    pub fn new(to: Box<dyn Write + Send>) -> RequestLog {
        RequestLog(Mutex::new(to))
    }

    /// Writes the line of one request. A log that cannot be written costs the
    /// request nothing: it is said once on stderr.
    pub(crate) fn record(&self, entry: Entry<'_>) {
        let at = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        let line = json!({
            "ts": at.as_millis() as u64,
            "client": entry.client,
            "server": entry.server,
            "method": entry.method,
            "name": entry.name,
            "ms": (entry.elapsed.as_secs_f64() * 1e3 * 1e3).round() / 1e3,
            "outcome": entry.outcome,
        });
        let mut to = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if writeln!(to, "{line}").and_then(|()| to.flush()).is_err() {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| eprintln!("warning: the gateway's request log cannot be written"));
        }
    }
}

/// One forwarded request.
pub(crate) struct Entry<'a> {
    /// The client's name, when it gave one.
    pub client: Option<String>,
    /// The server it went to, when one has the name.
    pub server: Option<String>,
    /// `tools/call`, `resources/read`, `prompts/get`.
    pub method: &'a str,
    /// The tool, the URI or the prompt.
    pub name: &'a str,
    pub elapsed: Duration,
    /// `ok`, `tool-error`, `input-required`, `failed` or `cancelled`.
    pub outcome: &'a str,
}
