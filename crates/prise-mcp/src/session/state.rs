//! The state of one mount's session: the connection of the moment, which a restart
//! or a new sign-in replaces, and what outlives connections (the catalog, the pins'
//! verdicts, subscriptions; see `handler::Shared`).

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, RwLock};

use crate::session::dial::{Connected, Connection};
use crate::session::handler::Shared;

/// What a mount shares with its supervisor: the connection, which a restart replaces.
pub(crate) struct Live {
    connection: RwLock<Arc<Connection>>,
    pub shared: Arc<Shared>,
    /// Set by `close`, so that the supervisor does not restart what is being stopped.
    pub closing: AtomicBool,
    /// Set when a person asks for a restart: the exit that follows is not a crash.
    pub restart_asked: AtomicBool,
}

impl Live {
    pub fn current(&self) -> Arc<Connection> {
        self.connection
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub fn replace(&self, connection: Connection) {
        *self.connection.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(connection);
    }
}

impl Live {
    /// Takes a new connection (and what it lists) in place of the current one.
    /// It listens again on the new connection (see `subscriptions`).
    pub(crate) async fn reconnected(&self, connected: Connected) {
        let (connection, catalog) = connected.into_connection();
        self.shared.first_listing(catalog);
        let old = self.current();
        self.replace(connection);
        old.service.cancellation_token().cancel();
        self.listen().await;
    }

    pub(crate) fn new(connected: Connected, shared: Arc<Shared>) -> Arc<Live> {
        let (connection, catalog) = connected.into_connection();
        shared.first_listing(catalog);
        Arc::new(Live {
            connection: RwLock::new(Arc::new(connection)),
            shared,
            closing: AtomicBool::new(false),
            restart_asked: AtomicBool::new(false),
        })
    }

    /// Listens to the server on the current connection (see `subscriptions`).
    pub(crate) async fn listen(&self) {
        let connection = self.current();
        crate::session::subscriptions::resume(
            connection.service.service(),
            connection.service.peer(),
        )
        .await;
    }
}
