//! What `prise run --output json` prints at the end of a run: the answer, the turns,
//! every tool call and how it ended, and the tokens used. Built from the same events
//! as `stream_json`, so that a script reads one vocabulary whichever it takes.

use serde::Serialize;

use crate::{AgentEvent, ToolOutcome};

/// A run, summed up.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSummary {
    /// The model's final answer.
    pub answer: String,
    /// Turns taken.
    pub turns: usize,
    /// Every call, in the order the model made them.
    pub tool_calls: Vec<CallSummary>,
    /// Tokens, as the provider counted them.
    pub usage: Usage,
}

/// One tool call of a run.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallSummary {
    /// The call's id in the conversation.
    pub id: String,
    /// The tool, by the name the model used.
    pub tool: String,
    /// Its arguments as the model gave them (see [`crate::stream_json::arguments`]).
    pub arguments: serde_json::Value,
    /// How it ended (`ok`, `error`, `refused`, `unknown`, `cancelled`); `None`
    /// while it runs.
    pub outcome: Option<&'static str>,
    /// Whether the call was read from the model's text rather than a native call.
    pub recovered: bool,
    /// Why it was not run, when it was refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How long it took, once it ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<f64>,
}

/// Tokens of a run.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Usage {
    /// Read by the model.
    pub input: u64,
    /// Written by it.
    pub output: u64,
}

impl RunSummary {
    /// Takes in one event of the run.
    pub fn record(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::TurnEnd { turn, usage, .. } => {
                self.turns = *turn;
                if let Some(usage) = usage {
                    self.usage.input += usage.input;
                    self.usage.output += usage.output;
                }
            }
            AgentEvent::ToolStart {
                id,
                name,
                arguments,
                recovered,
            } => self.tool_calls.push(CallSummary {
                id: id.clone(),
                tool: name.clone(),
                arguments: crate::stream_json::arguments(arguments),
                outcome: None,
                recovered: *recovered,
                reason: None,
                elapsed_ms: None,
            }),
            AgentEvent::Approval {
                id,
                verdict: Err(refusal),
                ..
            } => {
                if let Some(call) = self.call(id) {
                    call.reason = Some(refusal.to_string());
                }
            }
            AgentEvent::ToolEnd {
                id,
                outcome,
                elapsed,
                ..
            } => {
                if let Some(call) = self.call(id) {
                    call.outcome = Some(outcome.as_str());
                    call.elapsed_ms = Some(elapsed.as_secs_f64() * 1e3);
                }
            }
            _ => {}
        }
    }

    /// Calls were made, and every one was refused.
    pub fn all_refused(&self) -> bool {
        let refused = ToolOutcome::Refused.as_str();
        !self.tool_calls.is_empty() && self.tool_calls.iter().all(|c| c.outcome == Some(refused))
    }

    fn call(&mut self, id: &str) -> Option<&mut CallSummary> {
        self.tool_calls.iter_mut().find(|c| c.id == id)
    }
}
