//! What the chat prints: the answer as it streams, the trace, the lists.

use std::io::Write;

use prise_agent::AgentEvent;
use prise_llm::StopReason;
use tokio::sync::mpsc;

use crate::commands::run::print_trace;
use crate::markdown::TerminalMarkdown;
use crate::output::{printable, revealed};

/// Prints the agent's events: answers on stdout as they stream, the tool trace on
/// stderr.
pub async fn print_events(mut events: mpsc::UnboundedReceiver<AgentEvent>, styled: bool) {
    let mut markdown = TerminalMarkdown::new();
    // Whether the model's text left the cursor mid-line ("Let me check."), where a
    // trace line must not be glued.
    let mut mid_line = false;
    // The answer starts on a line of its own after the thoughts.
    let mut thinking = false;
    while let Some(event) = events.recv().await {
        let text = match event {
            AgentEvent::ModelDelta(text) if styled => {
                // A model can be talked into writing escape sequences by what it read.
                let text = markdown.push(&printable(&text));
                if thinking && !text.is_empty() {
                    thinking = false;
                    if mid_line { format!("\n{text}") } else { text }
                } else {
                    text
                }
            }
            AgentEvent::ModelDelta(text) => text,
            // Thoughts are shown dimmed to a person, and kept out of piped output.
            AgentEvent::ModelReasoning(text) if styled => {
                thinking = true;
                format!(
                    "{}{}{}",
                    crate::markdown::THOUGHT,
                    printable(&text),
                    crate::markdown::RESET
                )
            }
            AgentEvent::ModelReasoning(_) => continue,
            // A turn cancelled mid-answer leaves styles open: the next starts clean.
            AgentEvent::TurnStart { .. } if styled => markdown.finish(),
            AgentEvent::TurnEnd { ref stop, .. } => {
                let text = if styled {
                    markdown.finish()
                } else {
                    String::new()
                };
                write_out(&text, &mut mid_line);
                if *stop == StopReason::Length {
                    if mid_line {
                        println!();
                        mid_line = false;
                    }
                    print_trace(&event);
                }
                continue;
            }
            AgentEvent::TurnStart { .. } => continue,
            other => {
                if mid_line {
                    println!();
                    mid_line = false;
                }
                print_trace(&other);
                continue;
            }
        };
        write_out(&text, &mut mid_line);
    }
}

/// Prints the model's text and notes whether it left the cursor mid-line.
fn write_out(text: &str, mid_line: &mut bool) {
    let visible = crate::markdown::without_trailing_styles(text);
    if !visible.is_empty() {
        *mid_line = !visible.ends_with('\n');
    }
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// `/tools`: each tool's exposed name and the first line of its description.
pub fn print_tools(mounts: &prise_mcp::Mounts) {
    for tool in mounts.tools() {
        let description = tool.tool.description.as_deref().unwrap_or("");
        let line = format!(
            "{}  {}",
            tool.name,
            description.lines().next().unwrap_or("")
        );
        println!("{}", revealed(&line));
    }
}

/// `/servers`: each server and its state.
pub fn print_servers(mounts: &prise_mcp::Mounts) {
    for (name, state) in mounts.states() {
        let state = match state {
            prise_mcp::ServerState::Ready => "ready".to_owned(),
            prise_mcp::ServerState::Failed(e) => format!("failed: {}", e.cause),
            prise_mcp::ServerState::Disabled => "disabled".to_owned(),
        };
        println!("{}", revealed(&format!("{name}  {state}")));
    }
}
