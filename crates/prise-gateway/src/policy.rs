//! The approval policy at the gateway: a tool the configuration denies is hidden and
//! its calls refused; one it asks about is asked about to the client that makes the
//! call (a form with nothing to fill: accepting allows it); the rest go through.
//!
//! It applies only when the configuration has an `"approval"` section: the clients of
//! a gateway (Claude Desktop, Cursor, VS Code) ask their users themselves, and asking
//! twice by default would be noise.

use prise_config::{Approval, Decision};
use prise_mcp::elicit::Elicitation;
use rmcp::model::{JsonObject, Tool};
use serde_json::json;

use crate::calls::Asker;
use crate::fleet::Fleet;

/// Characters of a call's arguments shown when asking about it.
const SHOWN_ARGUMENTS: usize = 500;

/// Whether `tool` (exposed as `exposed`) is listed to clients.
pub(crate) fn listed(approval: &Approval, exposed: &str, tool: &Tool) -> bool {
    approval.decide(exposed, read_only(tool)) != Decision::Deny
}

/// Whether the call of `exposed` with `arguments` may go on, asking the client when
/// the policy says so; the reason when not, for the client's user to read.
pub(crate) async fn check(
    approval: &Approval,
    fleet: &Fleet,
    exposed: &str,
    arguments: Option<&JsonObject>,
    asker: Option<&Asker>,
) -> Result<(), String> {
    let tools = fleet.tools();
    let Some(listed) = tools.iter().find(|t| t.name == exposed) else {
        // No such tool: the call fails as such, with nothing to approve.
        return Ok(());
    };
    match approval.decide(exposed, read_only(&listed.tool)) {
        Decision::Allow => Ok(()),
        Decision::Deny => Err(format!(
            "the gateway refused to call {exposed}: an \"approval\" rule of its configuration denies it"
        )),
        Decision::Ask => {
            let Some(asker) = asker else {
                return Err(format!(
                    "the gateway refused to call {exposed}: its configuration asks for approval, and this client cannot be asked (it does not support elicitation); allow it there with \"approval\": {{\"tools\": {{\"{exposed}\": \"allow\"}}}}"
                ));
            };
            let mut shown = arguments
                .map(|a| serde_json::Value::Object(a.clone()).to_string())
                .unwrap_or_else(|| "{}".to_owned());
            if shown.chars().count() > SHOWN_ARGUMENTS {
                shown = shown.chars().take(SHOWN_ARGUMENTS).collect::<String>() + "…";
            }
            let message = format!("Allow the call of {exposed} with {shown}?");
            let form = json!({"type": "object", "properties": {}});
            match asker.ask(&message, &form).await {
                Elicitation::Accept(_) => Ok(()),
                Elicitation::Decline | Elicitation::Cancel => Err(format!(
                    "the gateway did not call {exposed}: the user declined"
                )),
            }
        }
    }
}

fn read_only(tool: &Tool) -> bool {
    tool.annotations
        .as_ref()
        .and_then(|a| a.read_only_hint)
        .unwrap_or(false)
}
