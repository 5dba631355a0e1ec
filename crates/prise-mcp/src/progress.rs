//! News of one call, for the caller that made it.
//!
//! Every server's progress notifications and task statuses are [`MountEvent`]s, which
//! say which server they come from but not which of its calls. A caller that needs
//! the news of its own call (the agent, telling its user; the gateway, passing it on
//! to the client that called) makes the call within [`reported_to`]: the news of the
//! requests made there reaches its sink, and nobody else's does.
//!
//! [`MountEvent`]: crate::MountEvent

use std::collections::HashMap;
use std::sync::Mutex;

use rmcp::model::ProgressToken;
use tokio::sync::mpsc;

/// News of a call under way.
#[derive(Debug, Clone, PartialEq)]
pub enum CallNews {
    /// The server's progress notification.
    Progress {
        /// Progress so far.
        progress: f64,
        /// The total, when known.
        total: Option<f64>,
        /// A message for people.
        message: Option<String>,
    },
    /// The server made a task of the call, and its status changed.
    Task {
        /// Where it stands.
        status: crate::event::TaskStatus,
        /// The server's message about it.
        message: Option<String>,
    },
}

/// Where the news of a call goes.
pub type NewsSink = mpsc::UnboundedSender<CallNews>;

tokio::task_local! {
    static SINK: NewsSink;
}

/// Runs `call` (calls of [`crate::Mounts`]) with the news of its requests sent to `sink`.
pub async fn reported_to<F: Future>(sink: NewsSink, call: F) -> F::Output {
    SINK.scope(sink, call).await
}

/// Runs `call` (calls of [`crate::Mounts`]), handing each piece of news of it to
/// `on_news` as it comes, and what came on its way to the answer before returning.
pub async fn watch<T, Told: Future<Output = ()>>(
    call: impl Future<Output = T>,
    mut on_news: impl FnMut(CallNews) -> Told,
) -> T {
    let (sink, mut news) = mpsc::unbounded_channel();
    let call = reported_to(sink, call);
    tokio::pin!(call);
    let result = loop {
        tokio::select! {
            result = &mut call => break result,
            Some(news) = news.recv() => on_news(news).await,
        }
    };
    // A notification just before the answer may still be on its way from rmcp's
    // handler task: it is given its turn first.
    tokio::task::yield_now().await;
    while let Ok(news) = news.try_recv() {
        on_news(news).await;
    }
    result
}

/// The sink of the call being made in this task, if its caller asked for news.
pub(crate) fn current() -> Option<NewsSink> {
    SINK.try_with(Clone::clone).ok()
}

/// Sends `news` to the sink of the call being made in this task, if any.
pub(crate) fn tell(news: CallNews) {
    if let Some(sink) = current() {
        let _ = sink.send(news);
    }
}

/// The sinks of one connection's requests under way, by progress token: the server's
/// notifications arrive on rmcp's task, not the caller's.
#[derive(Debug, Default)]
pub(crate) struct Sinks(Mutex<HashMap<String, NewsSink>>);

impl Sinks {
    /// Sends what arrives for `token` to `sink` until the guard is dropped.
    pub fn watch<'a>(&'a self, token: &ProgressToken, sink: NewsSink) -> Watching<'a> {
        let key = key(token);
        self.lock().insert(key.clone(), sink);
        Watching { sinks: self, key }
    }

    /// Sends `news` to whoever watches `token`.
    pub fn send(&self, token: &ProgressToken, news: CallNews) {
        if let Some(sink) = self.lock().get(&key(token)) {
            let _ = sink.send(news);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, NewsSink>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A request whose news is watched.
pub(crate) struct Watching<'a> {
    sinks: &'a Sinks,
    key: String,
}

impl Drop for Watching<'_> {
    fn drop(&mut self) {
        self.sinks.lock().remove(&self.key);
    }
}

fn key(token: &ProgressToken) -> String {
    serde_json::to_string(token).unwrap_or_default()
}
