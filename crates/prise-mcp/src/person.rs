//! The person's part of a sign-in, as the caller answers it: being sent to the
//! authorization server and coming back, or entering a code on another device. A
//! leaf: the terminal, the page and the conformance client implement it, and the
//! sign-in (`auth`) asks it.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// Why the person's part of a sign-in did not happen (no browser, a port taken, they
/// gave up), in the words to show them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PersonError(pub String);

impl From<String> for PersonError {
    fn from(words: String) -> PersonError {
        PersonError(words)
    }
}

/// A boxed future, for the traits below.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The person's part of a sign-in: being sent to the authorization server and coming
/// back. The terminal opens a browser and listens on a loopback port; a headless
/// user agent (the conformance client) follows the redirect itself.
pub trait SignIn: Send + Sync + std::fmt::Debug {
    /// Opens the place the authorization server sends the person back to, on
    /// `port` when one is configured.
    fn listen(&self, port: Option<u16>) -> BoxFuture<'_, Result<Box<dyn Return>, PersonError>>;

    /// Shows the person a code to enter elsewhere, for `server` (the device flow).
    fn show_code(&self, server: &str, code: &DeviceCode) -> Result<(), PersonError> {
        let _ = (server, code);
        Err(PersonError("there is nobody to show a code to".into()))
    }
}

/// A place to come back to, open until the person does.
pub trait Return: Send {
    /// The redirect URI to register and to send.
    fn redirect_uri(&self) -> String;
    /// Sends the person to `url` to sign in to `server`, and waits for them to come
    /// back; returns the URL they came back to (with `code` and `state`).
    fn visit(
        self: Box<Self>,
        server: String,
        url: String,
    ) -> BoxFuture<'static, Result<String, PersonError>>;
}

/// What the person is shown: where to go, and the code to enter there.
#[derive(Debug, Clone)]
pub struct DeviceCode {
    /// Where to enter the code.
    pub verification_uri: String,
    /// The same with the code in it, when the server gives one (a QR code's worth).
    pub verification_uri_complete: Option<String>,
    /// The code.
    pub user_code: String,
    /// How long the code lasts.
    pub expires_in: Duration,
}
