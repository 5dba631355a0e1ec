//! prise's side of each connection: what it tells servers it can do, and what it does
//! with their requests and notifications.

// Roots and logging are deprecated by the 2026-07-28 revision (SEP-2577), but servers
// of the dated versions still use them: server-filesystem asks for roots.
#![allow(deprecated)]

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability, ErrorCode,
    FormElicitationCapability, Implementation, JsonObject, ListRootsResult,
    LoggingMessageNotificationParam, ProgressNotificationParam, ProtocolVersion,
    ResourceUpdatedNotificationParam, Root, TASKS_EXTENSION_ID,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use tokio::sync::broadcast;

use crate::catalog::Catalog;
use crate::elicit::{Elicitation, Elicitor};
use crate::event::{Listing, MountEvent};
use crate::progress::CallNews;

/// State shared between a mount and its client handler.
#[derive(Debug)]
pub(crate) struct Shared {
    pub catalog: RwLock<Catalog>,
    /// Bumped whenever the catalog changes, so the registry knows to rebuild.
    pub generation: AtomicU64,
    pub events: broadcast::Sender<MountEvent>,
    /// When the server last asked for roots (`roots/list`).
    pub roots_asked: std::sync::Mutex<Option<std::time::Instant>>,
    /// Who hears the progress of which request.
    pub news: crate::progress::Sinks,
    /// The resources subscribed to, and the 2026-07-28 notification stream.
    pub subscriptions: crate::session::subscriptions::Subscriptions,
    /// How the server's tools are judged against their pins; `None` pins nothing.
    pub vetting: Option<crate::session::vetting::Vetting>,
    /// The tools withheld, and why, as of the last listing.
    pub withheld: RwLock<Vec<crate::session::vetting::Withholding>>,
    /// Listings under way after the server said its tools changed; calls wait for
    /// them (see [`Shared::relisted`]).
    pub relisting: tokio::sync::watch::Sender<usize>,
    /// Where each listing stands: [`IDLE`], [`LISTING`] or [`AGAIN`].
    relists: [AtomicU8; 3],
    /// Set once the first listing is in place: a change the server tells of during
    /// the handshake is listed after it, never before (a partial listing would be
    /// pinned as the whole, and what came next taken as new).
    listed: tokio::sync::watch::Sender<bool>,
}

/// How long a change told during the handshake waits for the first listing.
const FIRST_LISTING_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// No listing under way.
const IDLE: u8 = 0;
/// A listing under way.
const LISTING: u8 = 1;
/// A listing under way, and the server said the list changed since it began.
const AGAIN: u8 = 2;

impl Shared {
    pub fn new(events: broadcast::Sender<MountEvent>) -> Shared {
        Shared {
            catalog: RwLock::default(),
            generation: AtomicU64::new(0),
            events,
            roots_asked: std::sync::Mutex::new(None),
            news: Default::default(),
            subscriptions: Default::default(),
            vetting: None,
            withheld: RwLock::default(),
            relisting: tokio::sync::watch::Sender::new(0),
            relists: Default::default(),
            listed: tokio::sync::watch::Sender::new(false),
        }
    }

    /// Waits, up to `limit`, for the listings under way: a call made right after the
    /// server said its tools changed is judged on the new listing, so that a tool
    /// changed within a session is withheld from the next call already.
    pub async fn relisted(&self, limit: std::time::Duration) {
        let mut relisting = self.relisting.subscribe();
        let _ = tokio::time::timeout(limit, relisting.wait_for(|n| *n == 0)).await;
    }

    /// Takes a new listing; the tools are judged against their pins before anyone
    /// sees it (a definition changed in a `list_changed` is withheld as one changed
    /// between runs).
    /// Takes the first listing of a connection: everything the server offers.
    pub fn first_listing(&self, catalog: Catalog) {
        self.set_catalog(|c| *c = catalog);
        self.listed.send_replace(true);
    }

    pub fn set_catalog(&self, update: impl FnOnce(&mut Catalog)) {
        let mut catalog = self.catalog.write().unwrap_or_else(|e| e.into_inner());
        update(&mut catalog);
        if let Some(vetting) = &self.vetting {
            *self.withheld.write().unwrap_or_else(|e| e.into_inner()) = vetting.withheld(&catalog);
        }
        drop(catalog);
        self.generation.fetch_add(1, Ordering::Release);
    }
}

/// The handler rmcp calls for server-to-client traffic on one connection.
#[derive(Debug, Clone)]
pub(crate) struct Handler {
    pub server: Arc<str>,
    pub roots: Arc<[Root]>,
    pub elicitor: Arc<dyn Elicitor>,
    pub sampler: Option<Arc<dyn crate::sampling::Sampler>>,
    pub root_lister: Option<Arc<dyn crate::roots::RootLister>>,
    pub shared: Arc<Shared>,
    /// Whether its traffic is reported (see [`crate::trace`]).
    pub trace: bool,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        // Sampling only when someone can answer it (see `sampling`). Elicitation always:
        // the elicitor answers, if only to decline when nobody is there.
        // Roots only when there are some to offer (configured, or a client's through
        // the lister): a server told the client has roots may replace its configured
        // folders with them (see `roots`).
        let mut capabilities = ClientCapabilities::default();
        if !self.roots.is_empty() || self.root_lister.is_some() {
            capabilities.roots = Some(Default::default());
        }
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        if self.sampler.is_some() {
            capabilities.sampling = Some(Default::default());
        }
        // A long call may come back as a task, which prise follows to its result
        // (the `io.modelcontextprotocol/tasks` extension; see `call::tasks`).
        capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(TASKS_EXTENSION_ID.to_owned(), JsonObject::new());
        // The version offered by `initialize`; `server/discover` negotiates its own.
        ClientConfig::new(
            capabilities,
            Implementation::new("prise", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        self.roots().await.map_err(|why| {
            // What the spec says a client without roots answers.
            ErrorData::new(ErrorCode::METHOD_NOT_FOUND, why, None)
        })
    }

    async fn create_message(
        &self,
        request: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.sample(request)
            .await
            .map_err(|why| ErrorData::new(ErrorCode::INVALID_REQUEST, why, None))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(self.elicit(request).await)
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        self.list_changed(&context.peer, Listing::Tools);
    }

    async fn on_resource_list_changed(&self, context: NotificationContext<RoleClient>) {
        self.list_changed(&context.peer, Listing::Resources);
    }

    async fn on_prompt_list_changed(&self, context: NotificationContext<RoleClient>) {
        self.list_changed(&context.peer, Listing::Prompts);
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.updated(params.uri);
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.shared.news.send(
            &params.progress_token,
            CallNews::Progress {
                progress: params.progress,
                total: params.total,
                message: params.message.clone(),
            },
        );
        let _ = self.shared.events.send(MountEvent::Progress {
            server: self.server.to_string(),
            token: serde_json::to_value(&params.progress_token)
                .map(|v| v.to_string())
                .unwrap_or_default(),
            progress: params.progress,
            total: params.total,
            message: params.message,
        });
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        tracing::debug!(server = %self.server, level = ?params.level, "log: {}", params.data);
        let _ = self.shared.events.send(MountEvent::Log {
            server: self.server.to_string(),
            message: params,
        });
    }
}

impl Handler {
    /// The roots offered to this server, noting that it asked: those of the client
    /// it works for (through the lister), as that client gave them, else the
    /// configured ones, which are never sent as an empty list (see `roots`).
    pub async fn roots(&self) -> Result<ListRootsResult, String> {
        *self
            .shared
            .roots_asked
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(std::time::Instant::now());
        if let Some(lister) = &self.root_lister
            && let Some(roots) = lister.list_roots(&self.server).await
        {
            return Ok(ListRootsResult::new(roots));
        }
        if self.roots.is_empty() {
            return Err("no roots are offered to this server now".to_owned());
        }
        Ok(ListRootsResult::new(self.roots.to_vec()))
    }

    /// A server's sampling request, answered by the sampler when there is one.
    pub async fn sample(
        &self,
        request: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, String> {
        match &self.sampler {
            Some(sampler) => sampler
                .create_message(&self.server, request)
                .await
                .map_err(|unanswered| unanswered.0),
            None => Err("prise does not offer sampling to this server".to_owned()),
        }
    }

    /// A server's question, answered by the elicitor (form mode; URL mode is
    /// declined).
    pub async fn elicit(&self, request: ElicitRequestParams) -> ElicitResult {
        let (action, content) = match request {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => {
                let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
                match self.elicitor.elicit(&self.server, &message, &schema).await {
                    Elicitation::Accept(content) => (ElicitationAction::Accept, Some(content)),
                    Elicitation::Decline => (ElicitationAction::Decline, None),
                    Elicitation::Cancel => (ElicitationAction::Cancel, None),
                }
            }
            // URL mode (open a page, wait for an out-of-band answer) is not offered.
            _ => (ElicitationAction::Decline, None),
        };
        let result = ElicitResult::new(action);
        match content {
            Some(content) => result.with_content(serde_json::Value::Object(content)),
            None => result,
        }
    }

    /// The server said `what` changed: it is listed again. However often the server
    /// says so, at most one listing of each kind is under way and one is due after
    /// it, and nothing is kept per notification (a flood of 80,000 cost 14 KB each
    /// when each started a listing of its own).
    pub fn list_changed(&self, peer: &rmcp::Peer<RoleClient>, what: Listing) {
        let state = &self.shared.relists[what.index()];
        let before = state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |s| {
                Some(if s == IDLE { LISTING } else { AGAIN })
            })
            .unwrap_or(AGAIN);
        if before != IDLE {
            return;
        }
        self.shared.relisting.send_modify(|n| *n += 1);
        let (client, peer) = (self.clone(), peer.clone());
        tokio::spawn(async move {
            let state = &client.shared.relists[what.index()];
            let mut listed = client.shared.listed.subscribe();
            // Bounded: a handshake that fails never lists, and this task holds the
            // state that would tell it; listing then fails at once on the closed
            // connection, and the task ends.
            let first = listed.wait_for(|listed| *listed);
            let _ = tokio::time::timeout(FIRST_LISTING_WAIT, first).await;
            loop {
                client.relist(&peer, what).await;
                // Said to change again while listing: once more; else done.
                let before = state
                    .fetch_update(Ordering::AcqRel, Ordering::Acquire, |s| {
                        Some(if s == AGAIN { LISTING } else { IDLE })
                    })
                    .unwrap_or(IDLE);
                if before != AGAIN {
                    break;
                }
            }
            client
                .shared
                .relisting
                .send_modify(|n| *n = n.saturating_sub(1));
        });
    }

    /// Lists `what` again.
    async fn relist(&self, peer: &rmcp::Peer<RoleClient>, what: Listing) {
        let relisted = match what {
            Listing::Tools => peer
                .list_all_tools()
                .await
                .map(|tools| self.shared.set_catalog(|c| c.tools = tools)),
            Listing::Prompts => peer
                .list_all_prompts()
                .await
                .map(|prompts| self.shared.set_catalog(|c| c.prompts = prompts)),
            Listing::Resources => {
                let (resources, templates) = tokio::join!(
                    peer.list_all_resources(),
                    peer.list_all_resource_templates()
                );
                resources.and_then(|resources| {
                    let templates = templates?;
                    self.shared.set_catalog(|c| {
                        c.resources = resources;
                        c.templates = templates;
                    });
                    Ok(())
                })
            }
        };
        match relisted {
            Ok(()) => self.changed(what),
            Err(e) => self.relist_failed(what, &e),
        }
    }

    /// Reports that a resource subscribed to changed. News of one no longer
    /// subscribed to (sent before the server heard that) is dropped.
    pub fn updated(&self, uri: String) {
        if !self.shared.subscriptions.has(&uri) {
            tracing::debug!(server = %self.server, "an update of {uri}, not subscribed to");
            return;
        }
        let _ = self.shared.events.send(MountEvent::ResourceUpdated {
            server: self.server.to_string(),
            uri,
        });
    }

    /// A connection that is closing cannot be re-listed; that is no news.
    fn relist_failed(&self, what: Listing, error: &rmcp::ServiceError) {
        if matches!(error, rmcp::ServiceError::TransportClosed) {
            tracing::debug!(server = %self.server, "not re-listing {what}: the connection is closed");
        } else {
            tracing::warn!(server = %self.server, "re-listing {what} failed: {error}");
        }
    }

    fn changed(&self, what: Listing) {
        tracing::debug!(server = %self.server, "{what} changed, re-listed");
        let _ = self.shared.events.send(MountEvent::ListChanged {
            server: self.server.to_string(),
            what,
        });
    }
}
