//! Questions for clients of the 2026-07-28 revision, which a server may not send
//! requests to: a call whose server asks something goes on in the background, its
//! question becomes the client's `input_required` result (SEP-2322), and the client's
//! retry, carrying the answer and the state it was given, resumes it.
//!
//! The state names a call waiting in this process: a client that retries against
//! another replica of the gateway finds nothing there (dated-era sessions need
//! affinity for the same reason).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use prise_mcp::CallError;
use prise_mcp::progress::CallNews;
use rmcp::model::{CallToolResult, ErrorData, InputRequiredResult, InputResponses};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::calls::Question;
use crate::relay::Relay;

/// How long a call waits for its client to come back with an answer.
const WAIT_FOR_ANSWER: Duration = Duration::from_secs(600);
/// Calls waiting for answers at most; past that, the oldest is given up.
const MAX_WAITING: usize = 256;
/// The key of the one question in a round's `inputRequests`.
const QUESTION: &str = "request";

/// A call running in the background on behalf of a 2026-07-28 client. Dropped
/// before it ends (the client cancelled, or never came back with an answer), it is
/// stopped, which tells its server to stop.
pub(crate) struct Running {
    pub questions: mpsc::UnboundedReceiver<Question>,
    /// The call's progress and task statuses, for the round under way to pass on.
    pub news: mpsc::UnboundedReceiver<CallNews>,
    pub call: JoinHandle<Result<CallToolResult, CallError>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.call.abort();
    }
}

/// A call waiting for its client's answer (`running` is taken when it resumes).
struct Waiting {
    running: Option<Running>,
    answer: Option<oneshot::Sender<Value>>,
    since: Instant,
}

/// Where a round ended.
pub(crate) enum Round {
    /// The call ended.
    Done(Result<CallToolResult, CallError>),
    /// The server asked: this is the client's answer to send.
    Asked(InputRequiredResult),
}

/// The calls waiting for their clients' answers.
#[derive(Default)]
pub(crate) struct Rounds {
    waiting: Mutex<HashMap<String, Waiting>>,
}

impl Rounds {
    /// Runs `running` until it ends or its server asks a question, passing its news to
    /// `relay` (the client of this round, when it asked for progress).
    pub async fn next(&self, mut running: Running, mut relay: Option<&mut Relay>) -> Round {
        loop {
            tokio::select! {
                ended = &mut running.call => {
                    // What the server said on its way to the answer comes first (a
                    // notification still on rmcp's handler task gets its turn).
                    tokio::task::yield_now().await;
                    while let Ok(news) = running.news.try_recv() {
                        if let Some(relay) = relay.as_deref_mut() {
                            relay.pass_on(news).await;
                        }
                    }
                    return Round::Done(ended.unwrap_or_else(|e| {
                        Err(CallError::NotFound(format!("the call was stopped: {e}")))
                    }));
                }
                Some(news) = running.news.recv() => {
                    if let Some(relay) = relay.as_deref_mut() {
                        relay.pass_on(news).await;
                    }
                }
                Some(question) = running.questions.recv() => {
                    let state = state();
                    let input_requests =
                        serde_json::from_value(json!({QUESTION: question.request})).ok();
                    let waiting = Waiting {
                        running: Some(running),
                        answer: Some(question.answer),
                        since: Instant::now(),
                    };
                    self.keep(state.clone(), waiting);
                    return Round::Asked(InputRequiredResult::new(input_requests, Some(state)));
                }
            }
        }
    }

    /// The call a client's retry resumes, given the client's answer; an error when the
    /// state names no call waiting here.
    pub fn resume(
        &self,
        state: &str,
        responses: Option<InputResponses>,
    ) -> Result<Running, ErrorData> {
        let waiting = self.waiting().remove(state);
        let Some(mut waiting) = waiting else {
            return Err(ErrorData::invalid_params(
                "requestState names no call waiting for an answer here (it ended, expired, or was made on another replica)",
                None,
            ));
        };
        // No answer to the question: the server's request goes unanswered (a question
        // counts as dismissed).
        let answer = responses.as_ref().and_then(|r| r.get(QUESTION)).cloned();
        if let (Some(to), Some(answer)) = (waiting.answer.take(), answer) {
            let _ = to.send(answer);
        }
        waiting
            .running
            .take()
            .ok_or_else(|| ErrorData::internal_error("the call was already resumed", None))
    }

    fn keep(&self, state: String, waiting: Waiting) {
        let mut all = self.waiting();
        all.retain(|_, w| w.since.elapsed() < WAIT_FOR_ANSWER);
        if all.len() >= MAX_WAITING
            && let Some(oldest) = all
                .iter()
                .min_by_key(|(_, w)| w.since)
                .map(|(k, _)| k.clone())
        {
            all.remove(&oldest);
        }
        all.insert(state, waiting);
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, HashMap<String, Waiting>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A fresh, unguessable state: it is all a retry needs to answer a question.
fn state() -> String {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; 16];
    // The system's generator does not fail on Linux; should it, the id is still
    // unique in this process.
    if ring::rand::SystemRandom::new().fill(&mut bytes).is_err() {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        bytes[..8].copy_from_slice(
            &NEXT
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                .to_le_bytes(),
        );
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
