//! The gateway's servers, each mounted on its own so that the gateway answers at once
//! and a slow server never holds the others back: a server's tools, resources and
//! prompts join what clients see when it is up, and they are told (`list_changed`).
//!
//! A listing waits for the servers still starting, up to [`LIST_WAIT`] after the
//! gateway started: a client that lists once, right after connecting, sees every
//! server that starts in a few seconds, and a slower one later.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use prise_mcp::model::{
    CallToolResult, CompleteRequestParams, CompleteResult, GetPromptResult, JsonObject,
    ReadResourceResult, Resource, ResourceTemplate,
};
use prise_mcp::{
    CallError, ExposedPrompt, ExposedTool, MountError, MountEvent, MountOptions, Mounts, Source,
};
use tokio::sync::{broadcast, watch};
use tokio::task::AbortHandle;

/// How long a listing waits for servers still starting, from the gateway's start.
pub const LIST_WAIT: Duration = Duration::from_secs(10);

/// The servers, one [`Mounts`] each, in the configuration's order.
pub(crate) struct Fleet {
    /// By the source's place in the configuration; `None` while it starts.
    parts: RwLock<Vec<Option<Arc<Mounts>>>>,
    events: broadcast::Sender<MountEvent>,
    /// How many have finished starting (or failed to).
    started: watch::Receiver<usize>,
    since: Instant,
    starting: std::sync::Mutex<Vec<AbortHandle>>,
}

impl Fleet {
    /// Starts mounting every source, each on its own, and returns at once.
    pub fn start(sources: Vec<Source>, mut options: MountOptions) -> Arc<Fleet> {
        let events = options
            .events
            .clone()
            .unwrap_or_else(|| broadcast::channel(256).0);
        options.events = Some(events.clone());
        let (count, started) = watch::channel(0);
        let fleet = Arc::new(Fleet {
            parts: RwLock::new(vec![None; sources.len()]),
            events,
            started,
            since: Instant::now(),
            starting: Default::default(),
        });
        for (index, source) in sources.into_iter().enumerate() {
            let (fleet_of_task, options, count) = (fleet.clone(), options.clone(), count.clone());
            let task = tokio::spawn(async move {
                let name = source.name().to_owned();
                let mounts = Arc::new(Mounts::start(vec![source], options).await);
                fleet_of_task
                    .parts
                    .write()
                    .unwrap_or_else(|e| e.into_inner())[index] = Some(mounts);
                count.send_modify(|n| *n += 1);
                // Its own `Ready` came before it was reachable here: clients are told
                // now that it is.
                for what in prise_mcp::Listing::ALL {
                    let _ = fleet_of_task.events.send(MountEvent::ListChanged {
                        server: name.clone(),
                        what,
                    });
                }
            });
            lock(&fleet.starting).push(task.abort_handle());
        }
        fleet
    }

    /// Waits for the servers still starting, up to [`LIST_WAIT`] after the start.
    pub async fn settled(&self) {
        let total = self.total();
        let mut started = self.started.clone();
        let deadline = tokio::time::Instant::from_std(self.since + LIST_WAIT);
        let _ = tokio::time::timeout_at(deadline, started.wait_for(|n| *n >= total)).await;
    }

    /// Waits as [`Fleet::settled`] does, unless `known` holds already: a request that
    /// names what a server up has goes ahead at once; one that names what no server up
    /// has may be for a server still starting.
    pub async fn settled_unless(&self, known: impl Fn(&Fleet) -> bool) {
        if !known(self) {
            self.settled().await;
        }
    }

    /// Waits until every server has started or failed to.
    pub async fn all_started(&self) {
        let total = self.total();
        let mut started = self.started.clone();
        let _ = started.wait_for(|n| *n >= total).await;
    }

    fn total(&self) -> usize {
        self.parts.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// The servers up so far, in the configuration's order.
    fn parts(&self) -> Vec<Arc<Mounts>> {
        self.parts
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .flatten()
            .cloned()
            .collect()
    }

    /// The part that has `exposed` among its tools.
    fn with_tool(&self, exposed: &str) -> Option<Arc<Mounts>> {
        self.parts()
            .into_iter()
            .find(|m| m.server_of_tool(exposed).is_some())
    }

    pub fn subscribe(&self) -> broadcast::Receiver<MountEvent> {
        self.events.subscribe()
    }

    pub fn tools(&self) -> Vec<ExposedTool> {
        self.parts().iter().flat_map(|m| m.tools()).collect()
    }

    pub fn prompts(&self) -> Vec<ExposedPrompt> {
        self.parts().iter().flat_map(|m| m.prompts()).collect()
    }

    pub fn resources(&self) -> Vec<(String, Resource)> {
        self.parts().iter().flat_map(|m| m.resources()).collect()
    }

    pub fn resource_templates(&self) -> Vec<(String, ResourceTemplate)> {
        self.parts()
            .iter()
            .flat_map(|m| m.resource_templates())
            .collect()
    }

    /// The instructions of each server up, by name.
    pub fn instructions(&self) -> Vec<(String, String)> {
        self.parts()
            .iter()
            .flat_map(|m| m.mounts())
            .filter_map(|mount| {
                let info = mount.peer_info()?;
                let text = info.instructions.as_deref()?.trim();
                (!text.is_empty()).then(|| (mount.name().to_owned(), text.to_owned()))
            })
            .collect()
    }

    /// The servers that could not be mounted.
    pub fn failures(&self) -> Vec<MountError> {
        self.parts()
            .iter()
            .flat_map(|m| m.failures().to_vec())
            .collect()
    }

    pub fn server_of_tool(&self, exposed: &str) -> Option<String> {
        self.with_tool(exposed)?.server_of_tool(exposed)
    }

    /// Calls a tool, waiting for the servers still starting when no server up has it.
    pub async fn call_tool(
        &self,
        exposed: &str,
        arguments: Option<JsonObject>,
    ) -> Result<CallToolResult, CallError> {
        self.settled_unless(|f| f.with_tool(exposed).is_some())
            .await;
        match self.with_tool(exposed) {
            Some(part) => part.call_tool(exposed, arguments).await,
            None => Err(CallError::UnknownTool {
                name: exposed.to_owned(),
                suggestion: None,
            }),
        }
    }

    pub async fn get_prompt(
        &self,
        exposed: &str,
        arguments: Option<JsonObject>,
    ) -> Result<GetPromptResult, CallError> {
        let part = self
            .parts()
            .into_iter()
            .find(|m| m.prompts().iter().any(|p| p.name == exposed));
        match part {
            Some(part) => part.get_prompt(exposed, arguments).await,
            None => Err(CallError::NotFound(format!("no prompt named {exposed}"))),
        }
    }

    /// Completes an argument of a prompt (by its exposed name) or a resource template,
    /// asked of the server that has it.
    pub async fn complete(
        &self,
        request: CompleteRequestParams,
    ) -> Result<CompleteResult, CallError> {
        // Asked again once the servers still starting are up: one may have it.
        for round in 0..2 {
            if round == 1 {
                self.settled().await;
            }
            for part in self.parts() {
                match part.complete(request.clone()).await {
                    Err(CallError::NotFound(_)) => continue,
                    answered => return answered,
                }
            }
        }
        Err(CallError::NotFound(
            "no server has the prompt or resource template to complete".to_owned(),
        ))
    }

    /// The server a resource is read from, by the rule `Mounts::read_resource`
    /// follows ([`prise_mcp::resource_owner`]).
    pub fn server_of_resource(&self, uri: &str) -> Result<String, CallError> {
        let parts = self.parts();
        prise_mcp::resource_owner(parts.iter().flat_map(|p| p.mounts().iter()), uri)
            .map(|mount| mount.name().to_owned())
    }

    /// Reads a resource from `server`, or from the server [`Fleet::server_of_resource`]
    /// names.
    pub async fn read_resource(
        &self,
        uri: &str,
        server: Option<&str>,
    ) -> Result<ReadResourceResult, CallError> {
        let (part, server) = self.part_of_resource(uri, server)?;
        part.read_resource(uri, Some(&server)).await
    }

    /// Whether `server` is up and offers resource subscriptions.
    pub fn offers_subscriptions(&self, server: &str) -> bool {
        self.parts().iter().any(|part| {
            part.mounts()
                .iter()
                .any(|m| m.name() == server && m.offers_subscriptions())
        })
    }

    /// Subscribes to updates of `uri` at the server it is read from (or `server`).
    pub async fn subscribe_resource(
        &self,
        uri: &str,
        server: Option<&str>,
    ) -> Result<(), CallError> {
        let (part, server) = self.part_of_resource(uri, server)?;
        part.subscribe_resource(uri, Some(&server)).await
    }

    /// Ends a subscription of [`Fleet::subscribe_resource`].
    pub async fn unsubscribe_resource(
        &self,
        uri: &str,
        server: Option<&str>,
    ) -> Result<(), CallError> {
        let (part, server) = self.part_of_resource(uri, server)?;
        part.unsubscribe_resource(uri, Some(&server)).await
    }

    /// The part with the server that has `uri` (or `server`), and that server's name.
    fn part_of_resource(
        &self,
        uri: &str,
        server: Option<&str>,
    ) -> Result<(Arc<Mounts>, String), CallError> {
        let server = match server {
            Some(server) => server.to_owned(),
            None => self.server_of_resource(uri)?,
        };
        self.parts()
            .into_iter()
            .find(|m| m.mounts().iter().any(|x| x.name() == server))
            .map(|part| (part, server.clone()))
            .ok_or_else(|| CallError::NotFound(format!("no mounted server is named {server}")))
    }

    /// Stops the servers still starting and ends every server.
    pub async fn close(&self) {
        for task in lock(&self.starting).drain(..) {
            task.abort();
        }
        let parts: Vec<Arc<Mounts>> = self
            .parts
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .iter_mut()
            .filter_map(Option::take)
            .collect();
        for part in parts {
            if let Ok(mounts) = Arc::try_unwrap(part) {
                mounts.close().await;
            }
        }
    }
}

fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
