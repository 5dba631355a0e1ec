//! The page's conversation with the agent: one at a time, seen by every tab, saved
//! as a session after each question (the same files `prise chat --resume` reads).

use std::sync::{Arc, Mutex};

use prise_agent::Agent;
use prise_agent::session::{self, Session, SessionInfo};
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::hub::Hub;

/// The agent, its session, and the turn under way.
pub(crate) struct Chat {
    agent: Arc<tokio::sync::Mutex<Agent>>,
    session: Arc<Mutex<Option<Session>>>,
    model: String,
    hub: Hub,
    /// Wakes the turn under way to cancel it.
    cancel: Arc<Notify>,
}

/// Why a question was not taken.
#[derive(Debug)]
pub(crate) enum Busy {
    /// A question is being answered; one at a time.
    Answering,
}

impl Chat {
    /// The conversation of `agent` (named `model` in sessions), its events sent to
    /// `hub`.
    pub fn new(mut agent: Agent, model: String, hub: Hub) -> Chat {
        let mut events = agent.subscribe();
        let forwarded = hub.clone();
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                forwarded.send(
                    json!({"kind": "agent", "event": prise_agent::stream_json::event(&event)}),
                );
            }
        });
        let session = match Session::open(None, false, &model) {
            Ok((session, _)) => Some(session),
            Err(e) => {
                tracing::warn!("the chat will not be saved: {e}");
                None
            }
        };
        Chat {
            agent: Arc::new(tokio::sync::Mutex::new(agent)),
            session: Arc::new(Mutex::new(session)),
            model,
            hub,
            cancel: Arc::new(Notify::new()),
        }
    }

    /// The model's name.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Starts answering `prompt`; its steps and its end come as events.
    pub fn ask(&self, prompt: String) -> Result<(), Busy> {
        let Ok(mut agent) = self.agent.clone().try_lock_owned() else {
            return Err(Busy::Answering);
        };
        let hub = self.hub.clone();
        let session = self.session.clone();
        let cancel = self.cancel.clone();
        hub.send(json!({"kind": "chat-question", "text": prompt}));
        tokio::spawn(async move {
            let end = tokio::select! {
                outcome = agent.run(&prompt) => match outcome {
                    Ok(answer) => json!({"kind": "chat-end", "answer": answer}),
                    Err(e) => json!({"kind": "chat-end", "error": e.to_string()}),
                },
                () = cancel.notified() => json!({"kind": "chat-end", "cancelled": true}),
            };
            // Let the forwarder send the turn's last events before its end.
            tokio::task::yield_now().await;
            if let Some(session) = session.lock().unwrap_or_else(|e| e.into_inner()).as_mut()
                && let Err(e) = session.save(agent.history())
            {
                tracing::warn!("cannot save the chat's session: {e}");
            }
            hub.send(end);
        });
        Ok(())
    }

    /// Cancels the turn under way, if any (its tool calls with it).
    pub fn cancel(&self) {
        self.cancel.notify_waiters();
    }

    /// The saved sessions, the latest first.
    pub fn sessions(&self) -> Vec<SessionInfo> {
        session::sessions_dir()
            .map(|dir| session::list(&dir))
            .unwrap_or_default()
    }

    /// Continues session `id`, or a new one with `None`; returns its exchanges so far.
    pub async fn resume(&self, id: Option<&str>) -> Result<Value, String> {
        let Ok(mut agent) = self.agent.try_lock() else {
            return Err("a question is being answered; cancel it first".to_owned());
        };
        let (opened, messages) =
            Session::open(id, false, &self.model).map_err(|e| e.to_string())?;
        let exchanges = session::last_exchanges(&messages, usize::MAX);
        agent.clear();
        agent.resume(messages);
        let name = opened.id.clone();
        *self.session.lock().unwrap_or_else(|e| e.into_inner()) = Some(opened);
        let exchanges: Vec<Value> = exchanges
            .into_iter()
            .map(|(question, answer)| json!({"question": question, "answer": answer}))
            .collect();
        self.hub
            .send(json!({"kind": "chat-resumed", "session": name, "exchanges": exchanges}));
        Ok(json!({"session": name, "exchanges": exchanges}))
    }

    /// The session being written, if any.
    pub fn session(&self) -> Option<String> {
        self.session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|s| s.id.clone())
    }
}
