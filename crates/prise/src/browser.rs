//! Opening a page in the person's browser (a sign-in, `prise ui`).

/// Opens `url` in the person's browser: `$BROWSER`, else the desktop's opener.
/// `false` when none could be started.
pub fn open(url: &str) -> bool {
    let opener = std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.trim().is_empty())
        .unwrap_or_else(|| {
            if cfg!(target_os = "macos") {
                "open"
            } else {
                "xdg-open"
            }
            .to_owned()
        });
    let child = std::process::Command::new(&opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    match child {
        Ok(mut child) => {
            // Waited for on a thread of its own, so that it leaves no zombie.
            std::thread::spawn(move || child.wait());
            true
        }
        Err(e) => {
            tracing::debug!("cannot start {opener}: {e}");
            false
        }
    }
}
