//! The local web page of prise (`prise ui`): the mounted servers, their tools,
//! resources and prompts, a live trace of the traffic, a chat with the agent, and
//! MCP Apps, served on 127.0.0.1.
//!
//! This crate owns the page's HTTP (who may use it: see `guard`), its assets (plain
//! modules embedded in the binary; nothing is loaded from elsewhere), its event stream
//! (server-sent events to every open tab), and the questions it asks people
//! (approval, elicitation). It adds no logic of its own that the command line lacks:
//! calls, reads and the agent are prise-mcp's and prise-agent's. It must not know
//! about terminals, command-line flags or how a model is built.
//!
//! Bind, mount with the page answering the servers' questions, serve:
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use prise_mcp::{MountOptions, Mounts, Source};
//! use prise_ui::Page;
//!
//! # async fn show(sources: Vec<Source>) -> std::io::Result<()> {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let mut page = Page::new(listener, "127.0.0.1")?;
//! eprintln!("open {}", page.url());
//! let options = page.mount_options(MountOptions::default());
//! let mounts = Arc::new(Mounts::start(sources, options).await);
//! page.serve(mounts, None, prise_config::Approval::default(), std::future::pending()).await
//! # }
//! ```

mod api;
mod apps;
mod assets;
mod chat;
mod guard;
mod hub;
mod questions;
mod serve;

use std::sync::Arc;

use prise_agent::{Agent, Approver};
use prise_mcp::{Elicitor, MountOptions, Mounts};

use guard::Guard;
use hub::Hub;
use questions::{PageApprover, PageElicitor, Questions};

/// The page, bound to its address, before and while it serves.
pub struct Page {
    listener: tokio::net::TcpListener,
    guard: Guard,
    hub: Hub,
    questions: Arc<Questions>,
    started: std::time::Instant,
    /// Whether the mounts' events already reach the page (see [`Page::mount_options`]).
    hearing: bool,
}

impl Page {
    /// The page on `listener`; `host` is the name or address it was bound to, which
    /// requests may use besides the loopback names. The token is made here.
    pub fn new(listener: tokio::net::TcpListener, host: &str) -> std::io::Result<Page> {
        let port = listener.local_addr()?.port();
        let hub = Hub::new();
        Ok(Page {
            listener,
            guard: Guard::new(host, port),
            questions: Questions::new(hub.clone()),
            hub,
            started: std::time::Instant::now(),
            hearing: false,
        })
    }

    /// `options` for the mounts the page shows: the page answers the servers'
    /// questions, and hears every event from the first (each message of each server
    /// included, for its trace).
    pub fn mount_options(&mut self, mut options: MountOptions) -> MountOptions {
        let events = options
            .events
            .get_or_insert_with(|| tokio::sync::broadcast::channel(256).0);
        api::forward_mount_events(events.subscribe(), self.hub.clone(), self.started);
        self.hearing = true;
        options.elicitor = self.elicitor();
        options.trace = true;
        options
    }

    /// The address to open, with the run's token.
    pub fn url(&self) -> String {
        format!("{}/?token={}", self.guard.origins()[0], self.guard.token())
    }

    /// Who answers the servers' questions: the page (every open tab).
    pub fn elicitor(&self) -> Arc<dyn Elicitor> {
        Arc::new(PageElicitor(self.questions.clone()))
    }

    /// Who answers the approval policy's questions: the page.
    pub fn approver(&self) -> Arc<dyn Approver> {
        Arc::new(PageApprover(self.questions.clone()))
    }

    /// Serves `mounts` (and a chat with `agent`, named after its model, when there is
    /// one) until `shutdown` resolves. `approval` is the policy the tool calls of MCP
    /// Apps go through; the page's own forms are the person calling, as `prise call`.
    pub async fn serve(
        self,
        mounts: Arc<Mounts>,
        agent: Option<(Agent, String)>,
        approval: prise_config::Approval,
        shutdown: impl std::future::Future<Output = ()>,
    ) -> std::io::Result<()> {
        let approvals = Arc::new(prise_agent::Approvals::new(
            approval,
            false,
            Some(self.approver()),
        ));
        if !self.hearing {
            api::forward_mount_events(mounts.subscribe(), self.hub.clone(), self.started);
        }
        let chat = agent.map(|(agent, model)| chat::Chat::new(agent, model, self.hub.clone()));
        let state = Arc::new(api::State {
            mounts,
            chat,
            approvals,
            hub: self.hub,
            questions: self.questions,
            guard: self.guard,
        });
        serve::serve(self.listener, state, shutdown).await
    }
}
