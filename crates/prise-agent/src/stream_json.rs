//! Agent events as JSON: the lines of `prise run --output stream-json`, and what the
//! web page is sent. One shape for every consumer, so a script written against one
//! reads the other.

use prise_llm::StopReason;
use prise_mcp::progress::CallNews;

use crate::{AgentEvent, ToolOutcome};

/// One event as a line of `--output stream-json`.
pub fn event(event: &AgentEvent) -> serde_json::Value {
    use serde_json::json;
    let ms = |d: &std::time::Duration| d.as_secs_f64() * 1e3;
    match event {
        AgentEvent::TurnStart {
            turn,
            tools,
            tool_tokens,
        } => json!({"type": "turn-start", "turn": turn, "tools": tools, "toolTokens": tool_tokens}),
        AgentEvent::ModelDelta(text) => json!({"type": "model-delta", "text": text}),
        AgentEvent::ModelReasoning(text) => json!({"type": "model-reasoning", "text": text}),
        AgentEvent::ModelRetry { reason, delay } => {
            json!({"type": "error", "retrying": true, "message": reason, "delayMs": ms(delay)})
        }
        AgentEvent::Error(message) => json!({"type": "error", "message": message}),
        AgentEvent::Approval { id, name, verdict } => json!({
            "type": "approval", "id": id, "tool": name, "allowed": verdict.is_ok(),
            "reason": match verdict { Ok(how) => how.to_string(), Err(why) => why.to_string() },
        }),
        AgentEvent::ToolStart {
            id,
            name,
            arguments,
            recovered,
        } => {
            json!({"type": "tool-start", "id": id, "tool": name, "arguments": self::arguments(arguments), "recovered": recovered})
        }
        AgentEvent::UnreadableCall { reason, again } => {
            json!({"type": "unreadable-call", "reason": reason, "again": again})
        }
        AgentEvent::ToolProgress { id, name, news } => match news {
            CallNews::Progress {
                progress,
                total,
                message,
            } => json!({
                "type": "tool-progress", "id": id, "tool": name,
                "progress": progress, "total": total, "message": message,
            }),
            CallNews::Task { status, message } => json!({
                "type": "tool-progress", "id": id, "tool": name,
                "task": {"status": status, "message": message},
            }),
        },
        AgentEvent::ToolEnd {
            id,
            name,
            outcome,
            elapsed,
            result,
        } => json!({
            "type": "tool-end", "id": id, "tool": name, "outcome": outcome.as_str(),
            "ok": *outcome == ToolOutcome::Ok, "elapsedMs": ms(elapsed),
            "result": {"text": result.text, "isError": result.is_error, "structuredContent": result.structured,
                       "suspicious": result.suspicious},
        }),
        AgentEvent::TurnEnd {
            turn,
            elapsed,
            usage,
            stop,
        } => json!({
            "type": "turn-end", "turn": turn, "elapsedMs": ms(elapsed),
            "stop": match stop {
                StopReason::End => "end",
                StopReason::ToolCalls => "tool-calls",
                StopReason::Length => "length",
                StopReason::Degenerate(_) => "degenerate",
                StopReason::Other(other) => other,
            },
            "usage": usage.map(|u| json!({"input": u.input, "output": u.output})),
        }),
    }
}

/// A call's arguments as JSON when the model wrote JSON, else as the text it wrote.
pub fn arguments(arguments: &str) -> serde_json::Value {
    if arguments.trim().is_empty() {
        return serde_json::json!({});
    }
    serde_json::from_str(arguments)
        .unwrap_or_else(|_| serde_json::Value::String(arguments.to_owned()))
}
