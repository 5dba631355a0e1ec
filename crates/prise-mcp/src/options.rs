//! What every mount is given: who answers servers' questions, where state is kept,
//! and the channel events go out on. A leaf, read by every layer.

// `Root` is deprecated by the 2026-07-28 revision; dated-version servers still ask for it.
#![allow(deprecated)]

use std::sync::Arc;

use rmcp::model::Root;
use tokio::sync::broadcast;

use crate::elicit::{Decline, Elicitor};
use crate::eras::EraCache;
use crate::event::MountEvent;

/// Options that apply to every mount.
#[derive(Debug, Clone)]
pub struct MountOptions {
    /// Roots offered to every server instead of their configured ones (`--root`);
    /// `None` offers each server its own `roots` from the configuration.
    pub roots: Option<Vec<Root>>,
    /// Folder for per-server stderr logs; `None` keeps only the in-memory tail.
    pub log_dir: Option<std::path::PathBuf>,
    /// Who answers servers' questions (elicitation).
    pub elicitor: Arc<dyn Elicitor>,
    /// Who answers servers' sampling requests; `None` offers no sampling.
    pub sampler: Option<Arc<dyn crate::sampling::Sampler>>,
    /// Who offers servers the roots of the clients they work for; `None` offers the
    /// configured roots only (see [`crate::roots`]).
    pub root_lister: Option<Arc<dyn crate::roots::RootLister>>,
    /// Where the protocol era of each server is remembered; `None` probes every time.
    pub eras: Option<EraCache>,
    /// Where tools are pinned (see `prise_trust::pins`); `None` pins nothing. prise's
    /// command line pins in the project's `prise.lock` and the state folder.
    pub pins: Option<prise_trust::pins::PinFiles>,
    /// Who signs in when a remote server asks for it while mounting; `None` reports
    /// that it needs a sign-in (`prise auth login`).
    pub sign_in: Option<Arc<dyn crate::person::SignIn>>,
    /// Where sign-ins are kept (`<state dir>/auth`); `None` keeps none.
    pub auth_dir: Option<std::path::PathBuf>,
    /// The channel [`crate::Mounts`] sends its events on, for a caller that must hear
    /// them while mounting (which servers are still starting); `None` makes one.
    pub events: Option<broadcast::Sender<MountEvent>>,
    /// Whether every message to and from each server is reported as a
    /// [`MountEvent::Message`] (for a trace people read); off, nothing is copied.
    pub trace: bool,
}

impl Default for MountOptions {
    fn default() -> Self {
        let state = prise_config::state_dir();
        MountOptions {
            roots: None,
            log_dir: state.as_ref().map(|dir| dir.join("logs")),
            elicitor: Arc::new(Decline),
            sampler: None,
            root_lister: None,
            pins: None,
            eras: state
                .as_ref()
                .map(|dir| EraCache::at(dir.join("eras.json"))),
            sign_in: None,
            auth_dir: state.map(|dir| dir.join("auth")),
            events: None,
            trace: false,
        }
    }
}
