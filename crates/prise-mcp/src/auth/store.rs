//! Where sign-ins are kept: a file per server under the state dir that only the user
//! can read (0600 in a 0700 folder). Tokens are never logged; the file is the only
//! place they are written.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};

/// One server's sign-in on disk.
#[derive(Debug, Clone)]
pub struct TokenStore {
    path: PathBuf,
}

impl TokenStore {
    /// The store of server `name` at `url`, in `dir` (`<state dir>/auth`). The URL
    /// is part of the file's name: a server renamed or moved signs in again.
    pub fn new(dir: &Path, name: &str, url: &str) -> TokenStore {
        // FNV-1a: stable across runs, unlike the std hasher.
        let hash = url.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        TokenStore {
            path: dir.join(format!("{name}-{:08x}.json", hash as u32)),
        }
    }

    /// The store for server `name` at `url` in the default state dir.
    pub fn for_server(name: &str, url: &str) -> Option<TokenStore> {
        prise_config::state_dir().map(|dir| TokenStore::new(&dir.join("auth"), name, url))
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What is stored, if anything.
    pub fn read(&self) -> Option<StoredCredentials> {
        let text = std::fs::read_to_string(&self.path).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// The DPoP key the sign-in's tokens are bound to, if they are.
    pub(crate) fn dpop_key(&self) -> Option<super::dpop::DpopKey> {
        let text = std::fs::read_to_string(self.dpop_path()).ok()?;
        super::dpop::DpopKey::from_text(&text)
            .inspect_err(|e| tracing::warn!("{}: {e}", self.dpop_path().display()))
            .ok()
    }

    /// Keeps the DPoP key of a sign-in about to be made.
    pub(crate) fn save_dpop_key(&self, key: &super::dpop::DpopKey) -> std::io::Result<()> {
        write_private(&self.dpop_path(), key.to_text().as_bytes())
    }

    /// Forgets the DPoP key of an earlier sign-in.
    pub(crate) fn forget_dpop_key(&self) -> std::io::Result<()> {
        match std::fs::remove_file(self.dpop_path()) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    fn dpop_path(&self) -> PathBuf {
        self.path.with_extension("dpop")
    }

    /// Forgets the sign-in.
    pub fn remove(&self) -> std::io::Result<()> {
        self.forget_dpop_key()?;
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    fn write(&self, credentials: &StoredCredentials) -> std::io::Result<()> {
        let text = serde_json::to_string(credentials).map_err(std::io::Error::other)?;
        write_private(&self.path, text.as_bytes())
    }
}

/// Writes `bytes` to `path`, readable by the user only (in a folder only they can
/// enter): beside it first, then renamed over, so never half a file.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    let temporary = path.with_extension(format!("tmp.{}", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temporary)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&temporary, path)
}

impl TokenStore {
    /// `work` on this store, on tokio's blocking pool: the file is read, written
    /// and synced to disk there, never on the runtime's thread.
    pub(crate) async fn off_thread<T: Send + 'static>(
        &self,
        work: impl FnOnce(&TokenStore) -> T + Send + 'static,
    ) -> Result<T, AuthError> {
        let store = self.clone();
        tokio::task::spawn_blocking(move || work(&store))
            .await
            .map_err(|e| AuthError::CredentialStoreError(format!("the token store failed: {e}")))
    }
}

#[async_trait::async_trait]
impl CredentialStore for TokenStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.off_thread(TokenStore::read).await
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let written = self
            .off_thread(move |store| store.write(&credentials))
            .await?;
        written.map_err(|e| {
            AuthError::CredentialStoreError(format!("cannot write {}: {e}", self.path.display()))
        })
    }

    async fn clear(&self) -> Result<(), AuthError> {
        let removed = self.off_thread(TokenStore::remove).await?;
        removed.map_err(|e| {
            AuthError::CredentialStoreError(format!("cannot remove {}: {e}", self.path.display()))
        })
    }
}
