//! Whether a tool call may run: the configured policy, the user's answers, `--yes`.
//!
//! A server's tools run with the user's rights, so the policy decides first (per tool
//! glob allow, ask or deny; read-only tools allowed by one switch), then someone answers
//! the `ask`s: the person at the terminal, or nobody, in which case `ask` is a refusal
//! unless the run was started with `--yes`. Every decision is logged.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use prise_config::{Approval, Decision};

/// A person's answer to "may this tool run?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// This once.
    Yes,
    /// Not this time.
    No,
    /// This tool, for the rest of the session.
    Always,
}

/// Why a call was not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// An approval rule (or the default) denies the tool.
    Denied,
    /// The policy says ask, and nobody is there to answer.
    NobodyToAsk,
    /// The person said no.
    Declined,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Refusal::Denied => "denied by the approval policy",
            Refusal::NobodyToAsk => "it needs approval, and nobody is there to give it",
            Refusal::Declined => "declined by the user",
        })
    }
}

/// A future answer.
pub type AskFuture = Pin<Box<dyn Future<Output = Answer> + Send>>;

/// Who is asked when the policy says `ask`.
pub trait Approver: Send + Sync {
    /// Asks about one call of `tool` (`server__tool`) with `arguments` (JSON text).
    fn ask(&self, tool: &str, arguments: &str) -> AskFuture;
}

/// The policy with its session memory: what the agent asks before each call, and
/// what a host asks before a call someone else makes for the user (an MCP App's).
pub struct Approvals {
    policy: Approval,
    yes: bool,
    approver: Option<Arc<dyn Approver>>,
    always: Mutex<HashSet<String>>,
    /// One question at a time: the calls of a turn run in parallel, but a person answers
    /// one prompt after another (and an "always" may answer the next question).
    asking: tokio::sync::Mutex<()>,
}

impl Approvals {
    /// `policy`, with `yes` allowing what it would ask about, and `approver` asked
    /// otherwise (none: an `ask` is a refusal).
    pub fn new(policy: Approval, yes: bool, approver: Option<Arc<dyn Approver>>) -> Approvals {
        Approvals {
            policy,
            yes,
            approver,
            always: Mutex::default(),
            asking: tokio::sync::Mutex::new(()),
        }
    }

    fn always(&self, tool: &str) -> bool {
        self.always
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(tool)
    }

    /// `Ok(how)` when the call may run, `Err(why)` when it may not.
    pub async fn check(
        &self,
        tool: &str,
        read_only: bool,
        arguments: &str,
    ) -> Result<&'static str, Refusal> {
        let outcome = match self.policy.decide(tool, read_only) {
            Decision::Allow => Ok(if read_only {
                "allowed: read-only"
            } else {
                "allowed by policy"
            }),
            Decision::Deny => Err(Refusal::Denied),
            Decision::Ask if self.always(tool) => Ok("allowed: always, this session"),
            Decision::Ask if self.yes => Ok("allowed: --yes"),
            Decision::Ask => match &self.approver {
                None => Err(Refusal::NobodyToAsk),
                Some(approver) => {
                    let _turn = self.asking.lock().await;
                    if self.always(tool) {
                        // Answered "always" while this call waited its turn.
                        Ok("allowed: always, this session")
                    } else {
                        self.ask(approver.as_ref(), tool, arguments).await
                    }
                }
            },
        };
        match outcome {
            Ok(how) => tracing::info!(tool, "tool call {how}"),
            Err(why) => tracing::info!(tool, "tool call refused: {why}"),
        }
        outcome
    }

    async fn ask(
        &self,
        approver: &dyn Approver,
        tool: &str,
        arguments: &str,
    ) -> Result<&'static str, Refusal> {
        match approver.ask(tool, arguments).await {
            Answer::Yes => Ok("allowed by the user"),
            Answer::Always => {
                self.always
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(tool.to_owned());
                Ok("allowed by the user, always this session")
            }
            Answer::No => Err(Refusal::Declined),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Scripted(Mutex<Vec<Answer>>);

    impl Approver for Scripted {
        fn ask(&self, _tool: &str, _arguments: &str) -> AskFuture {
            let answer = self.0.lock().unwrap().remove(0);
            Box::pin(std::future::ready(answer))
        }
    }

    fn block<F: Future>(future: F) -> F::Output {
        futures::executor::block_on(future)
    }

    #[test]
    fn asks_yes_and_always() {
        let answers = Arc::new(Scripted(Mutex::new(vec![
            Answer::Yes,
            Answer::No,
            Answer::Always,
        ])));
        let approvals = Approvals::new(Approval::default(), false, Some(answers.clone()));
        assert_eq!(
            block(approvals.check("a__w", true, "{}")),
            Ok("allowed: read-only")
        );
        assert_eq!(
            block(approvals.check("a__w", false, "{}")),
            Ok("allowed by the user")
        );
        assert_eq!(
            block(approvals.check("a__w", false, "{}")),
            Err(Refusal::Declined)
        );
        assert_eq!(
            block(approvals.check("a__w", false, "{}")),
            Ok("allowed by the user, always this session")
        );
        // Not asked again: the script is empty and would panic.
        assert_eq!(
            block(approvals.check("a__w", false, "{}")),
            Ok("allowed: always, this session")
        );
    }

    /// Counts the questions open at once, and answers after a moment.
    struct Slow {
        open: Arc<std::sync::atomic::AtomicUsize>,
        most: Arc<std::sync::atomic::AtomicUsize>,
        asked: Arc<std::sync::atomic::AtomicUsize>,
        answer: Answer,
    }

    impl Approver for Slow {
        fn ask(&self, _tool: &str, _arguments: &str) -> AskFuture {
            use std::sync::atomic::Ordering::SeqCst;
            let (open, most, answer) = (self.open.clone(), self.most.clone(), self.answer);
            self.asked.fetch_add(1, SeqCst);
            let now = open.fetch_add(1, SeqCst) + 1;
            most.fetch_max(now, SeqCst);
            Box::pin(async move {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                open.fetch_sub(1, SeqCst);
                answer
            })
        }
    }

    #[tokio::test]
    async fn parallel_calls_are_asked_about_one_at_a_time() {
        use std::sync::atomic::Ordering::SeqCst;
        for (answer, questions) in [(Answer::Yes, 3), (Answer::Always, 1)] {
            let slow = Arc::new(Slow {
                open: Arc::default(),
                most: Arc::default(),
                asked: Arc::default(),
                answer,
            });
            let approvals = Approvals::new(Approval::default(), false, Some(slow.clone()));
            let outcomes =
                futures::future::join_all((0..3).map(|_| approvals.check("a__w", false, "{}")))
                    .await;
            assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
            assert_eq!(
                slow.most.load(SeqCst),
                1,
                "one question on screen at a time"
            );
            // "always" answers the calls that were waiting for their turn.
            assert_eq!(slow.asked.load(SeqCst), questions, "{answer:?}");
        }
    }

    #[test]
    fn nobody_to_ask_means_no_unless_yes() {
        let approvals = Approvals::new(Approval::default(), false, None);
        assert_eq!(
            block(approvals.check("a__w", false, "{}")),
            Err(Refusal::NobodyToAsk)
        );
        let approvals = Approvals::new(Approval::default(), true, None);
        assert_eq!(
            block(approvals.check("a__w", false, "{}")),
            Ok("allowed: --yes")
        );
    }
}
