//! The gateway: what prise mounts, served as one MCP server to other clients.
//!
//! A [`Gateway`] is an rmcp `ServerHandler` over the configured servers, each mounted
//! with prise-mcp on its own (`fleet`): tools and prompts under the names `prise tools`
//! shows (`server__tool`), resources and templates under the URIs their servers give,
//! each request routed to the server it names (`handler`). What a server asks of its
//! client during a call (a question, a sampling request, the roots) goes to the client
//! that made the call, as a request in the dated era or as `input_required` rounds at 2026-07-28
//! (`calls`, `rounds`); progress goes to that client too; list changes, resource
//! updates and log messages to the clients listening (`listeners`). The configuration's approval policy (`policy`),
//! profiles, per-client limits (`limits`) and a request log (`request_log`) sit on
//! the way. How it is transported (stdio, Streamable HTTP) is the caller's business.
//!
//! It owns the server side of the forwarding and nothing else: mounting is prise-mcp's,
//! and it must not know about language models or the command line.
//!
//! ```no_run
//! # async fn run(sources: Vec<prise_mcp::Source>) {
//! let gateway = prise_gateway::Gateway::start(sources, prise_mcp::MountOptions::default()).await;
//! // It answers at once; its servers join as they come up.
//! // Serve it, for instance on stdin and stdout with rmcp:
//! use rmcp::ServiceExt;
//! let running = gateway.clone().serve(rmcp::transport::stdio()).await.unwrap();
//! let _ = running.waiting().await;
//! gateway.close().await;
//! # }
//! ```

mod calls;
mod fleet;
mod handler;
mod limits;
mod listeners;
mod meta;
mod policy;
mod relay;
mod request_log;
mod rounds;

use std::sync::Arc;

use prise_config::{Approval, Profile};
use prise_mcp::{MountError, MountOptions, Source};

pub use calls::Calls;
pub use fleet::LIST_WAIT;
pub use limits::DEFAULT_CALLS_PER_CLIENT;
pub use request_log::RequestLog;

/// What prise mounts, served as one MCP server. Cheap to clone: each downstream
/// connection gets a clone.
#[derive(Clone)]
pub struct Gateway {
    fleet: Arc<fleet::Fleet>,
    calls: Arc<Calls>,
    /// Who hears list changes, resource updates and log messages.
    listeners: Arc<listeners::Listeners>,
    rounds: Arc<rounds::Rounds>,
    /// The approval policy, when the configuration sets one (see `policy`).
    approval: Option<Arc<Approval>>,
    /// Where each forwarded request is logged, if anywhere.
    log: Option<Arc<RequestLog>>,
    /// The profile its clients see, when not everything.
    profile: Option<Arc<Profile>>,
    /// Calls in flight per client.
    limits: Arc<limits::Limits>,
    /// Tools and prompts under their servers' own names, not `server__name`.
    bare_names: bool,
    /// Meta-tools in place of the tools (see `meta`), with the servers whose tools
    /// are listed all the same.
    meta_tools: Option<Arc<Vec<String>>>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway").finish_non_exhaustive()
    }
}

impl Gateway {
    /// Starts mounting `sources` and makes a gateway of them, at once: each server
    /// joins when it is up (see [`LIST_WAIT`] for how long listings wait).
    /// Questions the servers ask during a call go to the client that made it;
    /// `options.elicitor` answers the others (asked while no call of that server is
    /// under way).
    pub async fn start(sources: Vec<Source>, mut options: MountOptions) -> Gateway {
        let calls = Arc::new(Calls::new(options.elicitor.clone()));
        options.elicitor = calls.clone();
        options.sampler = Some(calls.clone());
        options.root_lister = Some(calls.clone());
        let fleet = fleet::Fleet::start(sources, options);
        let listeners = Arc::default();
        handler::forward_events(&fleet, &listeners);
        Gateway {
            fleet,
            calls,
            listeners,
            rounds: Arc::default(),
            approval: None,
            log: None,
            profile: None,
            limits: Arc::new(limits::Limits::new(DEFAULT_CALLS_PER_CLIENT)),
            bare_names: false,
            meta_tools: None,
        }
    }

    /// Lists `search_tools` and `call_tool` in place of the tools, for clients that
    /// choke on many; the tools of the servers named in `always` are listed as well.
    pub fn with_meta_tools(mut self, always: Vec<String>) -> Gateway {
        self.meta_tools = Some(Arc::new(always));
        self
    }

    /// Applies `approval` to the calls clients make: `deny` hides a tool and refuses
    /// its calls, `ask` asks the client that makes the call.
    pub fn with_approval(mut self, approval: Approval) -> Gateway {
        self.approval = Some(Arc::new(approval));
        self
    }

    /// Serves tools and prompts under their servers' own names (`echo`, not
    /// `everything__echo`), as a proxy of one server would: a name two servers share
    /// is served from the first of them in the configuration.
    pub fn with_bare_names(mut self) -> Gateway {
        self.bare_names = true;
        self
    }

    /// Lets each client have at most `max` calls in flight (a call beyond is refused).
    pub fn with_calls_per_client(mut self, max: usize) -> Gateway {
        self.limits = Arc::new(limits::Limits::new(max.max(1)));
        self
    }

    /// Logs each request forwarded to a server as a line of JSON to `log`.
    pub fn with_request_log(mut self, log: RequestLog) -> Gateway {
        self.log = Some(Arc::new(log));
        self
    }

    /// The same gateway showing only what `profile` shows: a client of it neither
    /// sees nor can call or read the rest.
    pub fn with_profile(&self, profile: Profile) -> Gateway {
        Gateway {
            profile: Some(Arc::new(profile)),
            ..self.clone()
        }
    }

    /// Whether the tool or prompt exposed as `exposed` of `server` is shown.
    fn shows(&self, server: &str, exposed: &str) -> bool {
        self.profile
            .as_ref()
            .is_none_or(|p| p.shows(server, exposed))
    }

    /// Whether `server`'s resources are shown.
    fn shows_server(&self, server: &str) -> bool {
        self.profile.as_ref().is_none_or(|p| p.shows_server(server))
    }

    /// Waits until every server has started or failed to; the ones that failed.
    pub async fn started(&self) -> Vec<MountError> {
        self.fleet.all_started().await;
        self.fleet.failures()
    }

    /// Stops the servers still starting and ends every mounted server.
    pub async fn close(self) {
        self.fleet.close().await;
    }
}
