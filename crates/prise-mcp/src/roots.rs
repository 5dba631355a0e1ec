//! Folders offered to servers as MCP roots.
//!
//! A root is an invitation: server-filesystem, for one, *replaces* the folders its
//! arguments gave it with the roots a client offers. So prise offers roots only when
//! the person asked for them (`--root`, or `"roots"` in the configuration), and to a
//! server offered none it does not even advertise the capability: the server keeps
//! what its configuration gives it. (server-filesystem 2026.8.31 keeps its arguments
//! both without the capability and for an empty list; other servers may read an
//! empty list as "nothing is allowed", so none is never sent as an empty list.)
//!
//! A caller that serves other clients (the gateway) gives a [`RootLister`]: the roots
//! of the client whose call the server is working on, which replace the configured
//! ones while that call lasts.

// `Root` is deprecated by the 2026-07-28 revision; dated-version servers still ask for it.
#![allow(deprecated)]

use std::future::Future;
use std::path::Path;
use std::pin::Pin;

use rmcp::model::Root;

/// The roots someone offers, or `None` when nobody does.
pub type RootsFuture = Pin<Box<dyn Future<Output = Option<Vec<Root>>> + Send>>;

/// Who offers servers the roots of the clients they work for.
pub trait RootLister: Send + Sync + std::fmt::Debug + 'static {
    /// The roots of whoever `server` is working for now; `None` when nobody offers
    /// any (the configured roots then answer, if there are some).
    fn list_roots(&self, server: &str) -> RootsFuture;
}

/// A folder as a root: the `file://` URI of its real path, named after its last
/// component. Fails when the folder does not exist or is not a folder.
pub fn folder_root(dir: &Path) -> std::io::Result<Root> {
    let real = dir.canonicalize()?;
    if !real.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            "not a folder",
        ));
    }
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "/".to_owned());
    Ok(Root::new(file_uri(&real)).with_name(name))
}

/// `file://` and the path, with the bytes a URI cannot hold percent-encoded.
fn file_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut uri = String::from("file://");
    for &byte in path.as_os_str().as_bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~!$&'()*+,;=:@".contains(&byte) {
            uri.push(byte as char);
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::file_uri;
    use std::path::Path;

    #[test]
    fn uris_escape_what_they_cannot_hold() {
        assert_eq!(file_uri(Path::new("/home/u/notes")), "file:///home/u/notes");
        assert_eq!(
            file_uri(Path::new("/home/u/my notes/50%")),
            "file:///home/u/my%20notes/50%25"
        );
        assert_eq!(file_uri(Path::new("/tmp/é")), "file:///tmp/%C3%A9");
    }
}
