//! A call's news passed on to the client that made it: the server's progress, and
//! each change of status of the task the server made of the call, as progress
//! notifications with the client's own token.

use prise_mcp::CallError;
use prise_mcp::model::{CallToolResult, ProgressNotificationParam, ProgressToken};
use prise_mcp::progress::{CallNews, watch};
use rmcp::RoleServer;
use rmcp::service::RequestContext;

/// Runs `call`, passing the news of it to the client (see [`Relay`]).
pub(crate) async fn with_progress(
    call: impl Future<Output = Result<CallToolResult, CallError>>,
    context: &RequestContext<RoleServer>,
    token: ProgressToken,
) -> Result<CallToolResult, CallError> {
    let mut relay = Relay::new(context, token);
    watch(call, |news| relay.pass_on(news)).await
}

/// Passes a call's news to the client as progress notifications with the client's
/// token: the server's own, and each change of status of the task the server made of
/// it (counted, with the status as the message).
pub(crate) struct Relay {
    peer: rmcp::Peer<RoleServer>,
    token: ProgressToken,
    statuses: f64,
}

impl Relay {
    pub(crate) fn new(context: &RequestContext<RoleServer>, token: ProgressToken) -> Relay {
        Relay {
            peer: context.peer.clone(),
            token,
            statuses: 0.0,
        }
    }

    pub(crate) fn pass_on(&mut self, news: CallNews) -> impl Future<Output = ()> + Send + use<> {
        let notification = match news {
            CallNews::Progress {
                progress,
                total,
                message,
            } => {
                let mut notification = ProgressNotificationParam::new(self.token.clone(), progress);
                notification.total = total;
                notification.message = message;
                notification
            }
            CallNews::Task { status, message } => {
                self.statuses += 1.0;
                let status = prise_mcp::task_status_word(status);
                let message = match message {
                    Some(message) => format!("{status}: {message}"),
                    None => status.to_owned(),
                };
                ProgressNotificationParam::new(self.token.clone(), self.statuses)
                    .with_message(message)
            }
        };
        let peer = self.peer.clone();
        async move {
            let _ = peer.notify_progress(notification).await;
        }
    }
}
