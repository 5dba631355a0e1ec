//! One request's path to a server: the call timeout (reset by progress), the
//! cancellation sent when the caller gives up, the single retry of a request the
//! server refused for want of a sign-in (`reauth`), the rounds of a request that
//! needs more input (`rounds`), and calls the server runs as tasks (`tasks`).
//!
//! It knows the session beneath it (the connection of the moment), never the mount
//! above it: a [`Caller`] is what a mount calls with.

// `Root` is deprecated by the 2026-07-28 revision; dated-version servers still ask for it.
#![allow(deprecated)]

pub(crate) mod reauth;
pub(crate) mod rounds;
pub mod tasks;

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, CancelledNotificationParam, ClientRequest,
    GetPromptRequestParams, GetPromptResult, JsonObject, ReadResourceRequestParams,
    ReadResourceResult, ServerPeerInfo, ServerResult,
};
use rmcp::service::PeerRequestOptions;
use rmcp::{Peer, RoleClient, ServiceError};
use tokio::sync::broadcast;

use crate::error::{CallError, tidy};
use crate::event::MountEvent;
use crate::session::dial::Connection;
use crate::session::handler::Handler;
use crate::session::state::Live;
use crate::session::subscriptions;
use crate::transport::guard::{self, Dropped};
use crate::transport::http::Challenge;

/// What a mount calls a server with: its connection of the moment and the limits
/// of each request.
pub(crate) struct Caller {
    pub name: String,
    pub live: Arc<Live>,
    pub call_timeout: Duration,
    pub max_message_size: usize,
    /// For a remote server: what signing in again takes.
    pub reach: Option<Arc<reauth::Reach>>,
}

impl Caller {
    /// The server's name in the configuration.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the server said about itself: protocol version, capabilities, name.
    pub fn peer_info(&self) -> Option<Arc<ServerPeerInfo>> {
        self.live.current().service.peer_info()
    }

    /// The current connection's peer, to send requests on.
    pub fn peer(&self) -> Peer<RoleClient> {
        self.live.current().service.peer().clone()
    }

    /// The handler that answers the server's questions.
    pub fn handler(&self) -> Handler {
        self.live.current().service.service().clone()
    }

    /// How long a request may go without news.
    pub fn call_timeout(&self) -> Duration {
        self.call_timeout
    }

    /// Where this mount's events go.
    pub fn events(&self) -> &broadcast::Sender<MountEvent> {
        &self.live.shared.events
    }

    /// Calls a tool by its name on the server. A result with `isError` is a result.
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
    ) -> Result<CallToolResult, CallError> {
        if self.live.current().task_tools.required(tool) {
            return Box::pin(tasks::dated::call(self, tool, arguments)).await;
        }
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = arguments;
        let request = ClientRequest::CallToolRequest(rmcp::model::Request::new(params));
        match self.request(request, "tools/call").await? {
            ServerResult::CallToolResult(result) => Ok(result),
            ServerResult::CreateTaskResult(created) => {
                Box::pin(tasks::follow(self, tool, created.task)).await
            }
            _ => Err(self.unexpected("tools/call")),
        }
    }

    /// Reads a resource.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, CallError> {
        let params = ReadResourceRequestParams::new(uri.to_owned());
        let request = ClientRequest::ReadResourceRequest(rmcp::model::Request::new(params));
        match self.request(request, "resources/read").await? {
            ServerResult::ReadResourceResult(result) => Ok(result),
            _ => Err(self.unexpected("resources/read")),
        }
    }

    /// Gets a prompt, filled with arguments.
    pub async fn get_prompt(
        &self,
        prompt: &str,
        arguments: Option<JsonObject>,
    ) -> Result<GetPromptResult, CallError> {
        let mut params = GetPromptRequestParams::new(prompt.to_owned());
        params.arguments = arguments;
        let request = ClientRequest::GetPromptRequest(rmcp::model::Request::new(params));
        match self.request(request, "prompts/get").await? {
            ServerResult::GetPromptResult(result) => Ok(result),
            _ => Err(self.unexpected("prompts/get")),
        }
    }

    /// Asks the server to complete an argument of a prompt or a resource template
    /// (`request` names them as the server does).
    pub async fn complete(
        &self,
        request: rmcp::model::CompleteRequestParams,
    ) -> Result<rmcp::model::CompleteResult, CallError> {
        let request = ClientRequest::CompleteRequest(rmcp::model::Request::new(request));
        match self.request(request, "completion/complete").await? {
            ServerResult::CompleteResult(result) => Ok(result),
            _ => Err(self.unexpected("completion/complete")),
        }
    }

    /// Whether the server offers resource subscriptions.
    pub fn offers_subscriptions(&self) -> bool {
        self.peer_info().is_some_and(|info| {
            info.capabilities
                .resources
                .as_ref()
                .is_some_and(|r| r.subscribe == Some(true))
        })
    }

    /// Subscribes to updates of resource `uri` (`on`), for as long as the mount
    /// lasts, across restarts of the server; or ends the subscription.
    pub async fn subscription(&self, uri: &str, on: bool) -> Result<(), CallError> {
        let method = if on {
            "resources/subscribe"
        } else {
            "resources/unsubscribe"
        };
        if !self.offers_subscriptions() {
            return Err(CallError::Transport {
                server: self.name.clone(),
                method: method.to_owned(),
                cause: "the server does not offer resource subscriptions".to_owned(),
            });
        }
        let connection = self.live.current();
        let (peer, client) = (connection.service.peer(), connection.service.service());
        let outcome = if on {
            subscriptions::subscribe(client, peer, uri).await
        } else {
            subscriptions::unsubscribe(client, peer, uri).await
        };
        outcome.map_err(|e| self.error(&connection, method, e))
    }

    /// Sends a request and follows it through the server's `input_required` rounds
    /// (see `rounds`) to its result.
    async fn request(
        &self,
        mut request: ClientRequest,
        method: &str,
    ) -> Result<ServerResult, CallError> {
        let fail = |cause: String| CallError::Transport {
            server: self.name.clone(),
            method: method.to_owned(),
            cause,
        };
        let mut state_only = 0;
        for _ in 0..rounds::MAX_ROUNDS {
            let result = self.request_signed_in(request.clone(), method).await?;
            let ServerResult::InputRequiredResult(asked) = result else {
                return Ok(result);
            };
            let questions = asked.input_requests.unwrap_or_default();
            if questions.is_empty() && asked.request_state.is_none() {
                return Err(fail("the server asked for input but named none".to_owned()));
            }
            if questions.is_empty() {
                tokio::time::sleep(rounds::pause(state_only)).await;
                state_only += 1;
            } else {
                state_only = 0;
            }
            let answers = Box::pin(rounds::answers(&self.handler(), questions))
                .await
                .map_err(fail)?;
            let answers = (!answers.is_empty()).then_some(answers);
            if !rounds::again(&mut request, answers, asked.request_state) {
                return Err(fail(
                    "the server asked for input on a request that cannot carry it".to_owned(),
                ));
            }
        }
        Err(fail(format!(
            "the server asked for more input {} times in a row; gave up",
            rounds::MAX_ROUNDS
        )))
    }

    /// Sends a request (see [`Mount::request_once`]). One whose own answer was a
    /// refusal for want of a sign-in or of scope did not run: it is made once more
    /// after signing in again (`reauth`). Any other failure is final.
    pub(crate) async fn request_signed_in(
        &self,
        request: ClientRequest,
        method: &str,
    ) -> Result<ServerResult, CallError> {
        let connection = self.live.current();
        let (error, challenge) = match self
            .request_once(&connection, request.clone(), method)
            .await
        {
            Ok(result) => return Ok(result),
            Err(Refused {
                error,
                challenge: Some(challenge),
            }) if self.reach.is_some() => (error, challenge),
            Err(refused) => return Err(refused.error),
        };
        let reach = self.reach.as_ref().expect("checked above");
        match Box::pin(reach.sign_in_again(&self.live, challenge, &connection)).await {
            Ok(true) => self
                .request_once(&self.live.current(), request, method)
                .await
                .map_err(|refused| refused.error),
            Ok(false) => Err(error),
            Err(why) => Err(CallError::Transport {
                server: self.name.clone(),
                method: method.to_owned(),
                cause: format!("{why} (after: {error})"),
            }),
        }
    }

    /// Sends a request on `connection` with the server's call timeout, reset by
    /// progress notifications. Dropping the future before the answer sends
    /// `notifications/cancelled`.
    async fn request_once(
        &self,
        connection: &Arc<Connection>,
        request: ClientRequest,
        method: &str,
    ) -> Result<ServerResult, Refused> {
        let peer = connection.service.peer();
        let mut options = PeerRequestOptions::with_timeout(self.call_timeout);
        options.reset_timeout_on_progress = true;
        let handle = match peer.send_request_with_option(request, options).await {
            Ok(handle) => handle,
            Err(e) => return Err(self.refused(connection, method, e)),
        };
        let id = handle.id.clone();
        let shared = &self.live.shared;
        let _news =
            crate::progress::current().map(|sink| shared.news.watch(&handle.progress_token, sink));
        let mut guard = CancelOnDrop {
            peer: peer.clone(),
            id: Some(id.clone()),
        };
        let result = handle.await_response().await;
        guard.id = None;
        match result {
            Ok(result) => Ok(result),
            Err(ServiceError::McpError(e)) if e.code.0 == guard::DROPPED_CODE => {
                let (server, method) = (self.name.clone(), method.to_owned());
                match connection.dropped.take(&id) {
                    Some(Dropped::TooLarge { size }) => Err(Refused::not(CallError::TooLarge {
                        server,
                        method,
                        size,
                        limit: self.max_message_size,
                    })),
                    Some(Dropped::NotUtf8) => {
                        Err(Refused::not(CallError::NotUtf8 { server, method }))
                    }
                    Some(Dropped::TooManyValues { limit }) => {
                        Err(Refused::not(CallError::TooManyValues {
                            server,
                            method,
                            limit,
                        }))
                    }
                    None => Err(self.refused(connection, &method, ServiceError::McpError(e))),
                }
            }
            Err(e) => {
                let mut refused = self.refused(connection, method, e);
                if let CallError::Closed { detail, .. } = &mut refused.error {
                    *detail = Box::pin(exit_detail(connection)).await;
                }
                Err(refused)
            }
        }
    }

    /// `error` as a [`CallError`], with the challenge of the refusal it is, if any.
    fn refused(&self, connection: &Connection, method: &str, error: ServiceError) -> Refused {
        Refused {
            challenge: Challenge::of_request(&error),
            error: self.error(connection, method, error),
        }
    }

    fn error(&self, connection: &Connection, method: &str, error: ServiceError) -> CallError {
        let server = self.name.clone();
        let method = method.to_owned();
        match error {
            ServiceError::Timeout { timeout } => CallError::Timeout {
                server,
                method,
                after: timeout,
            },
            ServiceError::McpError(e) => CallError::Rejected {
                server,
                method,
                code: e.code.0,
                message: tidy(&e.message),
            },
            // The connection is gone: the server exited (and may be restarting) or hung up.
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                let status = connection.child.as_ref().and_then(|c| c.status());
                let detail = status
                    .map(|s| format!(": the process exited ({s})"))
                    .unwrap_or_default();
                CallError::Closed {
                    server,
                    method,
                    detail,
                }
            }
            other => CallError::Transport {
                server,
                method,
                cause: tidy(&other.to_string()),
            },
        }
    }

    fn unexpected(&self, method: &str) -> CallError {
        CallError::Transport {
            server: self.name.clone(),
            method: method.to_owned(),
            cause: "the server answered with a result of the wrong kind".to_owned(),
        }
    }
}

/// `: the process exited (status); its last stderr line: ...` for a server that died
/// during a request, waiting a moment for the exit to be reaped.
async fn exit_detail(connection: &Connection) -> String {
    let Some(child) = &connection.child else {
        return String::new();
    };
    let mut detail = String::new();
    if let Ok(Some(status)) = tokio::time::timeout(Duration::from_millis(100), child.exited()).await
    {
        child.stderr.closed(Duration::from_millis(100)).await;
        detail.push_str(&format!(": the process exited ({status})"));
    }
    if let Some(last) = child.stderr.tail().last() {
        detail.push_str(&format!("; its last stderr line: {last}"));
    }
    detail
}

/// A request that failed, and the challenge of the server's refusal when its own
/// answer was 401 or 403.
struct Refused {
    error: CallError,
    challenge: Option<crate::transport::http::Challenge>,
}

impl Refused {
    fn not(error: CallError) -> Refused {
        Refused {
            error,
            challenge: None,
        }
    }
}

/// Sends `notifications/cancelled` for a request abandoned by its caller.
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    id: Option<rmcp::model::RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            let params =
                CancelledNotificationParam::new(Some(id), Some("cancelled by prise".to_owned()));
            let _ = peer.notify_cancelled(params).await;
        });
    }
}
