//! Asking the person at the terminal whether a tool call may run.

use std::io::{IsTerminal, Write};
use std::sync::Arc;

use prise_agent::{Answer, Approver, AskFuture};

use crate::question::{self, Question};

/// The terminal, when a person is there to answer.
pub fn for_this_session() -> Option<Arc<dyn Approver>> {
    (std::io::stdin().is_terminal() && std::io::stderr().is_terminal())
        .then(|| Arc::new(Terminal) as Arc<dyn Approver>)
}

struct Terminal;

impl Approver for Terminal {
    fn ask(&self, tool: &str, arguments: &str) -> AskFuture {
        // The person decides on what will run: the server, its tool and the arguments
        // exactly as they will be sent.
        let (server, name) = tool.split_once("__").unwrap_or(("prise", tool));
        let arguments = if arguments.trim().is_empty() {
            "{}"
        } else {
            arguments
        };
        let p = |text: &str| crate::output::revealed(text).into_owned();
        let question = format!(
            "\nserver {} wants to run {} {}\nallow? [y]es / [n]o / [a]lways for {} this session: ",
            p(server),
            p(name),
            p(arguments),
            p(tool)
        );
        let asked = Question::new();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                let Some(_terminal) = asked.turn() else {
                    return Answer::No;
                };
                let mut err = std::io::stderr().lock();
                let _ = write!(err, "{question}");
                let _ = err.flush();
                drop(err);
                match asked.read_line() {
                    question::Answer::Line(line) => match line.trim().to_ascii_lowercase().as_str()
                    {
                        "y" | "yes" => Answer::Yes,
                        "a" | "always" => Answer::Always,
                        _ => Answer::No,
                    },
                    // Ctrl-C: the turn that asked is being cancelled.
                    question::Answer::Cancelled | question::Answer::Closed => Answer::No,
                }
            })
            .await
            .unwrap_or(Answer::No)
        })
    }
}
