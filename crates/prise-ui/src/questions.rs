//! What the page asks people: may this tool call run (approval), and what a server
//! asks the user (elicitation). A question goes to every tab; the first answer counts
//! and closes it in the others. Unanswered questions are sent again to a tab that
//! opens later, so closing the page loses nothing.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use prise_agent::{Answer, Approver, AskFuture};
use prise_mcp::elicit::{ElicitationFuture, Form, FormError};
use prise_mcp::{Elicitation, Elicitor};
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::hub::Hub;

/// The open questions.
pub(crate) struct Questions {
    hub: Hub,
    next: AtomicU64,
    open: Mutex<BTreeMap<u64, Open>>,
}

struct Open {
    /// The question as sent, for tabs that open later.
    event: Value,
    answer: Reply,
}

enum Reply {
    Approval(oneshot::Sender<Answer>),
    /// The form the question asks for, which an answer is held to.
    Elicitation(oneshot::Sender<Elicitation>, Form),
}

/// Why an answer was not taken.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Unanswerable {
    /// No open question has that id (answered in another tab, or never asked).
    NoSuchQuestion,
    /// The answer does not fit the question.
    Malformed(&'static str),
    /// The content does not fit the form (the same check as the terminal's): the
    /// question stays open for a better answer.
    Invalid(FormError),
}

impl Questions {
    pub fn new(hub: Hub) -> Arc<Questions> {
        Arc::new(Questions {
            hub,
            next: AtomicU64::new(1),
            open: Mutex::default(),
        })
    }

    fn ask(&self, mut event: Value, answer: Reply) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        event["id"] = id.into();
        event["kind"] = "question".into();
        self.lock().insert(
            id,
            Open {
                event: event.clone(),
                answer,
            },
        );
        self.hub.send(event);
        id
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Open>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The questions still open, as they were sent.
    pub fn still_open(&self) -> Vec<Value> {
        self.lock().values().map(|o| o.event.clone()).collect()
    }

    /// Takes the page's `answer` to question `id`: for an approval `{"answer": "yes" |
    /// "always" | "no"}`, for an elicitation `{"action": "accept", "content": {...}}`
    /// or `{"action": "decline" | "cancel"}`.
    pub fn answer(&self, id: u64, answer: &Value) -> Result<(), Unanswerable> {
        let mut open = self.lock();
        let Some(question) = open.get(&id) else {
            return Err(Unanswerable::NoSuchQuestion);
        };
        let parsed = match &question.answer {
            Reply::Approval(_) => match answer["answer"].as_str() {
                Some("yes") => Ok(Parsed::Approval(Answer::Yes)),
                Some("always") => Ok(Parsed::Approval(Answer::Always)),
                Some("no") => Ok(Parsed::Approval(Answer::No)),
                _ => Err(Unanswerable::Malformed(
                    "an approval is answered with \"answer\": \"yes\", \"always\" or \"no\"",
                )),
            },
            Reply::Elicitation(_, form) => match answer["action"].as_str() {
                Some("accept") => match answer["content"].as_object() {
                    Some(content) => form
                        .check(content)
                        .map(|content| Parsed::Elicitation(Elicitation::Accept(content)))
                        .map_err(Unanswerable::Invalid),
                    None => Err(Unanswerable::Malformed(
                        "an accepted elicitation needs \"content\", an object",
                    )),
                },
                Some("decline") => Ok(Parsed::Elicitation(Elicitation::Decline)),
                Some("cancel") => Ok(Parsed::Elicitation(Elicitation::Cancel)),
                _ => Err(Unanswerable::Malformed(
                    "an elicitation is answered with \"action\": \"accept\", \"decline\" or \"cancel\"",
                )),
            },
        }?;
        let question = open.remove(&id).expect("looked up above");
        drop(open);
        // The asker may have gone (its turn was cancelled): nothing waits then.
        match (question.answer, parsed) {
            (Reply::Approval(tx), Parsed::Approval(a)) => {
                let _ = tx.send(a);
            }
            (Reply::Elicitation(tx, _), Parsed::Elicitation(e)) => {
                let _ = tx.send(e);
            }
            _ => unreachable!("parsed by the question's own kind"),
        }
        self.hub.send(json!({"kind": "answered", "id": id}));
        Ok(())
    }

    /// Forgets question `id` when its asker stopped waiting.
    fn withdraw(&self, id: u64) {
        if self.lock().remove(&id).is_some() {
            self.hub.send(json!({"kind": "answered", "id": id}));
        }
    }
}

enum Parsed {
    Approval(Answer),
    Elicitation(Elicitation),
}

/// Withdraws a question when the future waiting for its answer is dropped.
struct Withdraw(Arc<Questions>, u64);

impl Drop for Withdraw {
    fn drop(&mut self) {
        self.0.withdraw(self.1);
    }
}

/// Asks `event` of the page and waits for its answer, made by `reply` from the
/// channel; `unanswered` when the question goes away unanswered. Dropping the future
/// withdraws the question.
fn asked<T: Send + 'static>(
    questions: &Arc<Questions>,
    event: Value,
    reply: impl FnOnce(oneshot::Sender<T>) -> Reply,
    unanswered: T,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>> {
    let (tx, rx) = oneshot::channel();
    let id = questions.ask(event, reply(tx));
    let withdraw = Withdraw(questions.clone(), id);
    Box::pin(async move {
        let _withdraw = withdraw;
        rx.await.unwrap_or(unanswered)
    })
}

/// The page as the agent's approver (and an MCP App's).
#[derive(Clone)]
pub(crate) struct PageApprover(pub Arc<Questions>);

impl Approver for PageApprover {
    fn ask(&self, tool: &str, arguments: &str) -> AskFuture {
        let arguments = prise_agent::stream_json::arguments(arguments);
        asked(
            &self.0,
            json!({"type": "approval", "tool": tool, "arguments": arguments}),
            Reply::Approval,
            Answer::No,
        )
    }
}

/// The page as the mounts' elicitor.
#[derive(Clone)]
pub(crate) struct PageElicitor(pub Arc<Questions>);

impl std::fmt::Debug for PageElicitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the web page")
    }
}

impl Elicitor for PageElicitor {
    fn elicit(&self, server: &str, message: &str, schema: &Value) -> ElicitationFuture {
        let form = Form::of(schema);
        asked(
            &self.0,
            json!({"type": "elicitation", "server": server, "message": message, "schema": schema}),
            |tx| Reply::Elicitation(tx, form),
            Elicitation::Cancel,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_first_answer_counts_and_closes_the_question_everywhere() {
        let hub = Hub::new();
        let questions = Questions::new(hub.clone());
        let asked = PageApprover(questions.clone()).ask("s__t", r#"{"a":1}"#);
        let open = questions.still_open();
        assert_eq!(open.len(), 1);
        assert_eq!(open[0]["tool"], "s__t");
        assert_eq!(open[0]["arguments"]["a"], 1);
        let id = open[0]["id"].as_u64().unwrap();
        assert_eq!(
            questions.answer(id, &json!({"answer": "maybe"})),
            Err(Unanswerable::Malformed(
                "an approval is answered with \"answer\": \"yes\", \"always\" or \"no\""
            ))
        );
        questions.answer(id, &json!({"answer": "always"})).unwrap();
        assert_eq!(asked.await, Answer::Always);
        assert_eq!(
            questions.answer(id, &json!({"answer": "yes"})),
            Err(Unanswerable::NoSuchQuestion)
        );
        let (past, _) = hub.subscribe();
        assert!(past.last().unwrap().json.contains(r#""kind":"answered""#));
    }

    #[tokio::test]
    async fn an_answer_that_does_not_fit_the_form_leaves_the_question_open() {
        let questions = Questions::new(Hub::new());
        let schema = json!({"type": "object", "required": ["email"],
            "properties": {"email": {"type": "string", "format": "email"}, "age": {"type": "integer"}}});
        let asked = PageElicitor(questions.clone()).elicit("s", "who?", &schema);
        let id = questions.still_open()[0]["id"].as_u64().unwrap();
        let wrong = json!({"action": "accept", "content": {"email": "nobody", "age": "x"}});
        assert_eq!(
            questions.answer(id, &wrong),
            Err(Unanswerable::Invalid(FormError {
                field: "email".into(),
                why: "enter an email address".into()
            }))
        );
        assert_eq!(
            questions.still_open().len(),
            1,
            "still open for a better answer"
        );
        let right = json!({"action": "accept", "content": {"email": "a@b.org", "age": "42"}});
        questions.answer(id, &right).unwrap();
        let Elicitation::Accept(content) = asked.await else {
            panic!("not accepted")
        };
        assert_eq!(content["age"], 42, "sent as the integer the form asks for");
    }

    #[tokio::test]
    async fn a_question_nobody_waits_for_is_withdrawn() {
        let questions = Questions::new(Hub::new());
        let asked = PageElicitor(questions.clone()).elicit("s", "name?", &json!({}));
        assert_eq!(questions.still_open().len(), 1);
        drop(asked);
        assert!(questions.still_open().is_empty());
    }
}
