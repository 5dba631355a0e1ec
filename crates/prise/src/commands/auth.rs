//! `prise auth login | status | logout`: sign-ins to remote servers.

use std::io::Write;
use std::sync::Arc;
use std::time::SystemTime;

use prise_config::Server;
use prise_mcp::accounts::{self, Account, SignedOut};
use prise_mcp::auth::Loopback;
use prise_mcp::{MountOptions, Mounts, Source};
use serde_json::json;

use crate::cli::{AuthStatusArgs, LoginArgs, LogoutArgs};
use crate::commands::mounted::Servers;
use crate::failure::Failure;
use crate::output;
use crate::sign_in::Terminal;

/// Signs in to one server in the browser, then mounts it to show that the sign-in
/// works.
pub async fn login(servers: Servers, args: LoginArgs) -> Result<(), Failure> {
    let server = servers.server(&args.server)?.clone();
    accounts::remote(&server).map_err(|e| Failure::usage(e, None))?;
    let terminal = Terminal {
        open_browser: !args.no_browser,
        paste: true,
    };
    let options = MountOptions {
        sign_in: Some(Arc::new(Loopback::new(Arc::new(terminal)))),
        ..MountOptions::default()
    };
    let account = accounts::login(&server, &options, args.no_browser)
        .await
        .map_err(|e| match e.is_usage() {
            // A server that cannot be signed in to as configured: the request's fault.
            true => Failure::usage(e, None),
            false => Failure::Job(anyhow::anyhow!("{}: {e}", server.name)),
        })?;
    eprintln!("Signed in to {}{}.", server.name, describe(&account));
    // The proof: the server takes the new token.
    let mounts = Mounts::start(vec![Source::from(server.clone())], options).await;
    let outcome = match mounts.failures().first() {
        Some(failure) => Err(Failure::Job(anyhow::anyhow!(
            "signed in, but mounting failed: {failure}"
        ))),
        None => {
            let tools = mounts.tools().len();
            println!(
                "{} works: it offers {tools} tool{}",
                server.name,
                plural(tools)
            );
            Ok(())
        }
    };
    mounts.close().await;
    outcome
}

/// Shows every remote server's sign-in (or one server's).
pub fn status(servers: Servers, args: AuthStatusArgs) -> Result<(), Failure> {
    let remote: Vec<&Server> = match &args.server {
        Some(name) => vec![servers.server(name)?],
        None => servers
            .config
            .as_ref()
            .map(|c| {
                c.servers
                    .iter()
                    .filter(|s| accounts::remote(s).is_ok())
                    .collect()
            })
            .unwrap_or_default(),
    };
    let dir = auth_dir()?;
    let accounts: Vec<(&Server, Account)> = remote
        .into_iter()
        .map(|server| {
            let account = accounts::account(server, &dir).map_err(|e| Failure::usage(e, None))?;
            Ok((server, account))
        })
        .collect::<Result<_, Failure>>()?;
    let mut out = output::stdout();
    if args.json {
        let rows: Vec<_> = accounts
            .iter()
            .map(|(server, a)| as_json(server, a))
            .collect();
        output::json(&mut out, &rows)?;
    } else if accounts.is_empty() {
        writeln!(out, "no remote servers are configured; only those sign in")?;
    } else {
        let rows: Vec<Vec<String>> = accounts
            .iter()
            .map(|(server, account)| {
                let (state, detail) = state(server, account);
                vec![server.name.clone(), state.to_owned(), detail]
            })
            .collect();
        output::table(&mut out, &["SERVER", "SIGN-IN", "DETAIL"], &rows)?;
    }
    out.flush()?;
    Ok(())
}

/// Signs out of one server.
pub async fn logout(servers: Servers, args: LogoutArgs) -> Result<(), Failure> {
    let server = servers.server(&args.server)?;
    let dir = auth_dir()?;
    let issuer = accounts::account(server, &dir)
        .map_err(|e| Failure::usage(e, None))?
        .signed_in
        .and_then(|s| s.issuer)
        .unwrap_or_else(|| "the authorization server".to_owned());
    let signed_out = accounts::logout(server, &dir)
        .await
        .map_err(|e| Failure::Job(anyhow::anyhow!("{}: {e}", server.name)))?;
    let name = &server.name;
    match signed_out {
        SignedOut::NotSignedIn => println!("{name}: not signed in"),
        SignedOut::Revoked => {
            println!("Signed out of {name}: its tokens were revoked at {issuer} and forgotten")
        }
        SignedOut::Forgotten(why) => println!(
            "Signed out of {name}: its tokens are forgotten here, but not revoked ({why}); they last until they expire"
        ),
    }
    Ok(())
}

fn auth_dir() -> Result<std::path::PathBuf, Failure> {
    MountOptions::default().auth_dir.ok_or_else(|| {
        Failure::usage(
            "there is no state folder to keep sign-ins in",
            "set PRISE_STATE_DIR or HOME".to_owned(),
        )
    })
}

/// The state column and its detail.
fn state(server: &Server, account: &Account) -> (&'static str, String) {
    let remote = accounts::remote(server).ok();
    let own = remote.is_some_and(|r| r.has_own_token());
    let machine = remote.is_some_and(|r| r.signs_in_by_itself());
    match &account.signed_in {
        _ if own => (
            "own token",
            "the Authorization header in its configuration".to_owned(),
        ),
        Some(signed_in) if signed_in.expired() && !signed_in.refreshable => {
            ("expired", format!("run `prise auth login {}`", server.name))
        }
        Some(_) => (
            "signed in",
            describe(account).trim_start_matches(", ").to_owned(),
        ),
        None if machine => (
            "machine",
            "signs in by itself (client credentials) when used".to_owned(),
        ),
        None => (
            "no",
            format!(
                "signs in when it asks; or run `prise auth login {}`",
                server.name
            ),
        ),
    }
}

/// `, scopes a b, expires in 52 min, renewed automatically, by ISSUER` for a sign-in.
fn describe(account: &Account) -> String {
    let Some(signed_in) = &account.signed_in else {
        return String::new();
    };
    let mut parts = Vec::new();
    if !signed_in.scopes.is_empty() {
        parts.push(format!("scopes {}", signed_in.scopes.join(" ")));
    }
    let renewed = if signed_in.refreshable {
        ", renewed automatically"
    } else {
        ""
    };
    match signed_in
        .expires
        .map(|at| at.duration_since(SystemTime::now()))
    {
        Some(Ok(left)) => parts.push(format!("expires in {}{renewed}", in_words(left))),
        Some(Err(_)) if signed_in.refreshable => parts.push("expired, renewed on next use".into()),
        Some(Err(_)) => parts.push("expired".to_owned()),
        None => {}
    }
    if let Some(issuer) = &signed_in.issuer {
        parts.push(format!("by {issuer}"));
    }
    parts.iter().map(|p| format!(", {p}")).collect()
}

fn as_json(server: &Server, account: &Account) -> serde_json::Value {
    let (state, _) = state(server, account);
    let signed_in = account.signed_in.as_ref();
    let unix = |at: SystemTime| {
        at.duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .ok()
    };
    json!({
        "server": account.server,
        "url": account.url,
        "state": state,
        "issuer": signed_in.and_then(|s| s.issuer.clone()),
        "client_id": signed_in.map(|s| s.client_id.clone()),
        "scopes": signed_in.map(|s| s.scopes.clone()).unwrap_or_default(),
        "expires_at": signed_in.and_then(|s| s.expires).and_then(unix),
        "refreshable": signed_in.is_some_and(|s| s.refreshable),
        "file": account.file,
    })
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `30 s`, `52 min`, `5 h`, `3 days`.
fn in_words(time: std::time::Duration) -> String {
    match time.as_secs() {
        s if s < 120 => format!("{s} s"),
        s if s < 2 * 3600 => format!("{} min", s / 60),
        s if s < 2 * 86_400 => format!("{} h", s / 3600),
        s => format!("{} days", s / 86_400),
    }
}
