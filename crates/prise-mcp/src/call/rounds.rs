//! Multi-round requests (SEP-2322, the 2026-07-28 revision): a server that answers a
//! request with `input_required` asks the client first (a form, the roots) and is
//! asked again with the answers and the opaque state it gave, on a new request id.

use std::time::Duration;

use rmcp::model::{ClientRequest, InputRequest, InputRequests, InputResponses};

use crate::session::handler::Handler;

/// Rounds a request may take before prise gives up on it.
pub(crate) const MAX_ROUNDS: usize = 10;

/// The answers to a server's questions, given by the same handlers that answer them
/// in the dated era (the elicitor, the configured roots).
pub(crate) async fn answers(
    client: &Handler,
    requests: InputRequests,
) -> Result<InputResponses, String> {
    let mut responses = InputResponses::new();
    for (key, request) in requests {
        let value = match request {
            InputRequest::Elicitation(request) => {
                serde_json::to_value(client.elicit(request.params).await)
            }
            InputRequest::ListRoots(_) => serde_json::to_value(client.roots().await?),
            InputRequest::CreateMessage(request) => {
                serde_json::to_value(client.sample(request.params).await?)
            }
            _ => return Err("the server asked for input of a kind prise does not know".to_owned()),
        }
        .map_err(|e| e.to_string())?;
        responses.insert(key, value);
    }
    Ok(responses)
}

/// `request` with the answers and state for its next round; `false` when a request of
/// its kind cannot carry them.
pub(crate) fn again(
    request: &mut ClientRequest,
    responses: Option<InputResponses>,
    state: Option<String>,
) -> bool {
    match request {
        ClientRequest::CallToolRequest(r) => {
            r.params.input_responses = responses;
            r.params.request_state = state;
        }
        ClientRequest::GetPromptRequest(r) => {
            r.params.input_responses = responses;
            r.params.request_state = state;
        }
        ClientRequest::ReadResourceRequest(r) => {
            r.params.input_responses = responses;
            r.params.request_state = state;
        }
        _ => return false,
    }
    true
}

/// A round that only hands the state back (the server is still working) waits a
/// little more each time, so that a server polled this way is not hammered.
pub(crate) fn pause(state_only_rounds: usize) -> Duration {
    Duration::from_millis((50 * (1 << state_only_rounds.min(5))) as u64)
}
