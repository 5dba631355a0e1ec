//! What the chat prints: the answer as it streams, the trace, the lists.

use std::io::Write;

use prise_agent::AgentEvent;
use prise_llm::StopReason;
use prise_mcp::MountEvent;
use tokio::sync::{broadcast, mpsc};

use crate::commands::run::print_trace;
use crate::markdown::TerminalMarkdown;
use crate::output::{printable, revealed};
use crate::progress::Progress;

/// Prints the agent's events: answers on stdout as they stream, the tool trace on
/// stderr; and, in a terminal, servers' progress while tools run.
pub async fn print_events(
    mut events: mpsc::UnboundedReceiver<AgentEvent>,
    mut mount_events: broadcast::Receiver<MountEvent>,
    styled: bool,
) {
    let mut screen = Screen {
        styled,
        markdown: TerminalMarkdown::new(),
        mid_line: false,
        thinking: false,
        progress: Progress::for_terminal(),
    };
    loop {
        tokio::select! {
            event = events.recv() => match event {
                Some(event) => screen.show(event),
                None => break,
            },
            event = mount_events.recv() => match event {
                Ok(MountEvent::Progress { server, progress, total, message, .. }) => {
                    if let Some(bar) = screen.progress.as_mut() {
                        bar.update(&server, progress, total, message.as_deref());
                    }
                }
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                // Nothing more from the mounts: the agent's events go on.
                Err(broadcast::error::RecvError::Closed) => {
                    while let Some(event) = events.recv().await {
                        screen.show(event);
                    }
                    break;
                }
            },
        }
    }
}

/// The chat's terminal, and where its cursor is.
struct Screen {
    /// Markdown and colours for a person; text as written for a pipe or NO_COLOR.
    styled: bool,
    markdown: TerminalMarkdown,
    /// The model's text left the cursor mid-line ("Let me check."): a trace line must
    /// not be glued to it.
    mid_line: bool,
    /// Thoughts were shown: the answer starts on a line of its own.
    thinking: bool,
    /// Servers' progress, on a terminal.
    progress: Option<Progress>,
}

impl Screen {
    fn show(&mut self, event: AgentEvent) {
        // The bar belongs to calls in flight: whatever comes next takes its line.
        if let Some(progress) = self.progress.as_mut() {
            progress.clear();
        }
        match event {
            AgentEvent::ModelDelta(text) if self.styled => {
                // A model can be talked into writing escape sequences by what it read.
                let text = self.markdown.push(&printable(&text));
                if self.thinking && !text.is_empty() {
                    self.thinking = false;
                    self.end_line();
                }
                self.write(&text);
            }
            AgentEvent::ModelDelta(text) => self.write(&text),
            // Thoughts are shown dimmed to a person, and kept out of piped output.
            AgentEvent::ModelReasoning(text) if self.styled => {
                self.thinking = true;
                let (dim, reset) = (crate::markdown::THOUGHT, crate::markdown::RESET);
                self.write(&format!("{dim}{}{reset}", printable(&text)));
            }
            AgentEvent::ModelReasoning(_) => {}
            // A turn cancelled mid-answer leaves styles open: the next starts clean.
            AgentEvent::TurnStart { .. } | AgentEvent::TurnEnd { .. } if self.styled => {
                let rest = self.markdown.finish();
                self.write(&rest);
                if matches!(
                    event,
                    AgentEvent::TurnEnd {
                        stop: StopReason::Length,
                        ..
                    }
                ) {
                    self.trace(&event);
                }
            }
            AgentEvent::TurnEnd {
                stop: StopReason::Length,
                ..
            } => self.trace(&event),
            AgentEvent::TurnStart { .. } | AgentEvent::TurnEnd { .. } => {}
            other => self.trace(&other),
        }
    }

    /// The model's text, on stdout.
    fn write(&mut self, text: &str) {
        let visible = crate::markdown::without_trailing_styles(text);
        if !visible.is_empty() {
            self.mid_line = !visible.ends_with('\n');
        }
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }

    /// A line of the trace, on stderr, on a line of its own.
    fn trace(&mut self, event: &AgentEvent) {
        self.end_line();
        print_trace(event);
    }

    fn end_line(&mut self) {
        if std::mem::take(&mut self.mid_line) {
            println!();
        }
    }
}

/// `/tools`: the table `prise tools` prints.
pub fn print_tools(mounts: &prise_mcp::Mounts) {
    use crate::commands::inspect::{TOOLS_HEADER, tool_row};
    let rows: Vec<Vec<String>> = mounts.tools().iter().map(tool_row).collect();
    let mut out = std::io::stdout().lock();
    let _ = crate::output::table(&mut out, &TOOLS_HEADER, &rows);
    let _ = out.flush();
}

/// `/servers`: each server and its state.
pub fn print_servers(mounts: &prise_mcp::Mounts) {
    for status in mounts.statuses() {
        let state = match (status.state, status.error) {
            (_, Some(error)) => format!("failed: {error}"),
            (prise_mcp::State::Disabled, None) => "disabled".to_owned(),
            _ => "ready".to_owned(),
        };
        println!("{}", revealed(&format!("{}  {state}", status.name)));
    }
}
