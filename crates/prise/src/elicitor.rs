//! Answering servers' questions (elicitation) on the terminal.

use std::io::{IsTerminal, Write};
use std::sync::Arc;

use prise_mcp::elicit::{Elicitation, ElicitationFuture, Elicitor, Form, plain};
use serde_json::{Map, Value};

use crate::output::revealed;
use crate::question::{self, Question};

/// The terminal when a person is there (stdin and stderr are terminals), otherwise a
/// polite refusal that says why.
pub fn for_this_session() -> Arc<dyn Elicitor> {
    if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        Arc::new(Terminal)
    } else {
        Arc::new(NotInteractive)
    }
}

/// Declines, with a warning on stderr naming the server and its question.
#[derive(Debug)]
struct NotInteractive;

impl Elicitor for NotInteractive {
    fn elicit(&self, server: &str, message: &str, _schema: &Value) -> ElicitationFuture {
        eprintln!(
            "warning: server {server} asked for input ({message:?}); declined because prise is not running in a terminal"
        );
        Box::pin(std::future::ready(Elicitation::Decline))
    }
}

/// Asks field by field on stderr, reading answers from stdin.
#[derive(Debug)]
struct Terminal;

impl Elicitor for Terminal {
    fn elicit(&self, server: &str, message: &str, schema: &Value) -> ElicitationFuture {
        let (server, message, schema) = (server.to_owned(), message.to_owned(), schema.clone());
        let asked = Question::new();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                let Some(_terminal) = asked.turn() else {
                    return Elicitation::Cancel;
                };
                ask(&asked, &server, &message, &schema).unwrap_or(Elicitation::Cancel)
            })
            .await
            .unwrap_or(Elicitation::Cancel)
        })
    }
}

/// One form on the terminal; `None` when the terminal fails or the form is called off
/// (Ctrl-C in chat), which the server hears as a cancel.
fn ask(asked: &Question, server: &str, message: &str, schema: &Value) -> Option<Elicitation> {
    let mut err = std::io::stderr();
    // Everything shown comes from the server: printable, never obeyed.
    writeln!(
        err,
        "\nserver {} asks: {}",
        revealed(server),
        revealed(message)
    )
    .ok()?;
    writeln!(
        err,
        "  (Enter keeps the default in brackets; Ctrl-D declines)"
    )
    .ok()?;
    let form = Form::of(schema);
    let mut answers = Map::new();
    for field in &form.fields {
        let name = &field.name;
        loop {
            let mut prompt = format!("  {name}");
            if field.label != *name {
                prompt.push_str(&format!(" ({})", field.label));
            }
            if !field.choices.is_empty() {
                let shown: Vec<String> = field.choices.iter().map(|c| c.shown()).collect();
                prompt.push_str(&format!(" {{{}}}", shown.join("|")));
            }
            if field.multiple {
                prompt.push_str(" (several, separated by commas)");
            }
            if let Some(default) = &field.default {
                prompt.push_str(&format!(" [{}]", plain(default)));
            }
            write!(err, "{}: ", revealed(&prompt)).ok()?;
            err.flush().ok()?;
            let line = match asked.read_line() {
                question::Answer::Line(line) => line,
                question::Answer::Cancelled => return None,
                question::Answer::Closed => {
                    writeln!(err).ok()?;
                    return Some(Elicitation::Decline);
                }
            };
            let line = line.trim();
            if line.is_empty() {
                match &field.default {
                    Some(default) => {
                        answers.insert(name.clone(), default.clone());
                        break;
                    }
                    None if !field.required => break,
                    None => {
                        writeln!(err, "  {name} is required").ok()?;
                        continue;
                    }
                }
            }
            match field.parse(line) {
                Ok(value) => {
                    answers.insert(name.clone(), value);
                    break;
                }
                Err(why) => writeln!(err, "  {}", revealed(&why)).ok()?,
            }
        }
    }
    Some(Elicitation::Accept(answers))
}
