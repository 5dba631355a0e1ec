//! `prise ui` in a real browser: Debian's chromium, headless, driven over WebDriver
//! (chromedriver, through the fantoccini crate). The page mounts server-everything
//! and an MCP App fixture on the official Python SDK; the chat talks to the scripted
//! model double. Screenshots go to `target/tmp/ui-screenshots/`.

mod common;

#[path = "../../prise-llm/tests/scripted_model/mod.rs"]
mod scripted_model;

use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

use scripted_model::{Scripted, ScriptedModel};

/// How long the page gets to show something: generous, the machines are small; a
/// wait ends as soon as what it waits for is there.
const PATIENCE: Duration = Duration::from_secs(60);

/// `prise ui --no-open` in `home`, with the URL it printed.
struct Ui {
    child: Child,
    url: String,
    stderr: Arc<Mutex<String>>,
}

impl Ui {
    fn start(home: &Path, more: &[&str]) -> Ui {
        let mut child = Command::new(common::prise_bin())
            .args(["ui", "--no-open"])
            .args(more)
            .env_clear()
            .env("HOME", home)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .current_dir(home)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let mut lines = std::io::BufReader::new(child.stderr.take().unwrap());
        let kept = stderr.clone();
        std::thread::spawn(move || {
            let mut line = String::new();
            while lines.read_line(&mut line).unwrap_or(0) > 0 {
                if let Some(url) = line.trim().strip_prefix("prise ui: ") {
                    let _ = tx.send(url.to_owned());
                }
                kept.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        let url = rx
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|_| panic!("prise ui printed no URL: {}", stderr.lock().unwrap()));
        Ui { child, url, stderr }
    }

    /// `http://127.0.0.1:PORT`.
    fn origin(&self) -> String {
        self.url.split("/?").next().unwrap().to_owned()
    }

    fn token(&self) -> String {
        self.url.split("token=").nth(1).unwrap().to_owned()
    }
}

impl Drop for Ui {
    /// SIGTERM, as a person's Ctrl-C would: prise ends the servers it started; a
    /// prise that does not exit in time is killed.
    fn drop(&mut self) {
        if let Some(pid) = rustix::process::Pid::from_raw(self.child.id() as i32) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        }
        let deadline = std::time::Instant::now() + PATIENCE;
        while self.child.try_wait().ok().flatten().is_none() {
            if std::time::Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Headless chromium under chromedriver, killed with its whole process group.
struct Browser {
    driver: Child,
    client: Option<Client>,
}

impl Browser {
    async fn start() -> Browser {
        use std::os::unix::process::CommandExt;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("chromedriver (Debian's chromium-driver; scripts/peers.sh installs it)");
        let listening = common::wait_until(PATIENCE, || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        assert!(listening, "chromedriver did not listen on {port}");
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "goog:chromeOptions".to_owned(),
            json!({"args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,900"]}),
        );
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let client = ClientBuilder::new(connector)
            .capabilities(capabilities)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .expect("a chromium session");
        Browser {
            driver,
            client: Some(client),
        }
    }

    fn client(&self) -> &Client {
        self.client.as_ref().unwrap()
    }

    async fn close(mut self) {
        if let Some(client) = self.client.take() {
            let _ = client.close().await;
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if let Some(pid) = rustix::process::Pid::from_raw(self.driver.id() as i32) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = self.driver.wait();
    }
}

async fn element(c: &Client, css: &str) -> fantoccini::elements::Element {
    c.wait()
        .at_most(PATIENCE)
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css} did not appear: {e}"))
}

/// Waits until the text of the first element matching `css` contains `wanted`.
async fn text_of(c: &Client, css: &str, wanted: &str) -> String {
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        let text = match c.find(Locator::Css(css)).await {
            Ok(found) => found.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        };
        if text.contains(wanted) {
            return text;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{css} never said {wanted:?}; it says {text:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The text of the first element matching `css` once there, found again if the page
/// redrew it meanwhile.
async fn current_text(c: &Client, css: &str) -> String {
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        if let Ok(found) = c.find(Locator::Css(css)).await
            && let Ok(text) = found.text().await
        {
            return text;
        }
        assert!(std::time::Instant::now() < deadline, "{css} did not appear");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Goes into the frame of the app matching `css`, once there.
async fn enter_app(c: &Client, css: &str) {
    element(c, css).await.enter_frame().await.unwrap();
}

/// Types `text` into the first element matching `css` once there.
async fn type_into(c: &Client, css: &str, text: &str) {
    element(c, css).await.send_keys(text).await.unwrap();
}

/// Clicks the first element matching `css` once there, found again if the page redrew
/// it between finding and clicking (lists are redrawn when a server says they changed).
async fn click(c: &Client, css: &str) {
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        let clicked = match c.find(Locator::Css(css)).await {
            Ok(found) => found.click().await.map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        match clicked {
            Ok(()) => return,
            Err(e) => assert!(
                std::time::Instant::now() < deadline,
                "cannot click {css}: {e}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn screenshot(c: &Client, name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ui-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.png"));
    std::fs::write(&path, c.screenshot().await.unwrap()).unwrap();
    eprintln!("screenshot: {}", path.display());
    path
}

/// Calls `tool` from its form in the Tools tab, `fields` typed into its inputs.
async fn call_from_form(c: &Client, tool: &str, fields: &[(&str, &str)]) {
    click(c, "#tabs button[data-tab=tools]").await;
    click(c, &format!("#tool-list li[data-tool=\"{tool}\"]")).await;
    text_of(c, "#tool-detail h2 + p code", tool).await;
    for (name, value) in fields {
        let input = element(c, &format!("#tool-detail input[name=\"{name}\"]")).await;
        input.clear().await.unwrap();
        input.send_keys(value).await.unwrap();
    }
    click(c, "#tool-detail form.schema button[type=submit]").await;
}

fn configure(home: &Path, more: serde_json::Value) {
    let peers = common::peers();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/app_server.py");
    let mut config = json!({"mcpServers": {
        "everything": {"command": "node", "args": [peers.join("npm/node_modules/.bin/mcp-server-everything"), "stdio"]},
        "apps": {"command": peers.join("venv/bin/python"), "args": [fixture]},
    }});
    if let serde_json::Value::Object(more) = more {
        config.as_object_mut().unwrap().extend(more);
    }
    std::fs::write(home.join(".mcp.json"), config.to_string()).unwrap();
}

/// The page lists server-everything's tools, calls `echo` through its form, shows an
/// image a tool returns and an image resource, answers a server's form in the page,
/// and shows an MCP App whose tool call is asked for approval; the trace has it all.
#[tokio::test]
async fn the_page_calls_reads_answers_and_shows_apps() {
    let home = tempfile::tempdir().unwrap();
    configure(home.path(), json!({}));
    // And a server that cannot start: the page shows why.
    let file = home.path().join(".mcp.json");
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    config["mcpServers"]["broken"] = json!({"command": "python3", "args": ["-c",
        "import sys; print('cannot open the database', file=sys.stderr); sys.exit(3)"]});
    std::fs::write(&file, config.to_string()).unwrap();
    let ui = Ui::start(home.path(), &[]);
    let browser = Browser::start().await;
    let c = browser.client();
    c.goto(&ui.url).await.unwrap();
    element(c, "body[data-ready=true]").await;
    // The token was traded for the cookie: it is no longer in the address.
    assert!(!c.current_url().await.unwrap().as_str().contains("token"));
    text_of(c, "#server-table tbody", "everything").await;
    text_of(c, "#server-table tbody", "apps").await;
    text_of(c, "#server-table tr[data-server=broken]", "failed").await;
    click(c, "#server-table tr[data-server=broken]").await;
    text_of(c, "#server-detail .error", "exited").await;
    text_of(c, "#server-detail .stderr", "cannot open the database").await;
    screenshot(c, "servers").await;
    // A server restarted from the page comes back as another process.
    click(c, "#server-table tr[data-server=apps]").await;
    let before = current_text(c, "#server-detail .pid").await;
    click(c, "#server-detail button.restart").await;
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        let now = c.find(Locator::Css("#server-detail .pid")).await;
        let now = match now {
            Ok(found) => found.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        };
        if now.starts_with("process ") && now != before {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "apps is still {before}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // The search ranks as `prise tools --search` does.
    click(c, "#tabs button[data-tab=tools]").await;
    type_into(c, "#tool-search", "add two numbers").await;
    text_of(c, "#tool-list li:first-child", "everything__get-sum").await;
    element(c, "#tool-search").await.clear().await.unwrap();
    c.execute(
        "document.querySelector('#tool-search').dispatchEvent(new Event('input'))",
        vec![],
    )
    .await
    .unwrap();
    element(c, "#tool-list li[data-tool=\"apps__increment\"]").await;

    call_from_form(
        c,
        "everything__echo",
        &[("message", "hello from the browser")],
    )
    .await;
    text_of(
        c,
        "#tool-detail .call-result",
        "Echo: hello from the browser",
    )
    .await;
    screenshot(c, "tool-call").await;

    call_from_form(c, "everything__get-tiny-image", &[]).await;
    element(c, "#tool-detail .call-result img").await;
    let width = c
        .execute(
            "return document.querySelector('#tool-detail .call-result img').naturalWidth",
            vec![],
        )
        .await
        .unwrap();
    assert!(
        width.as_u64().unwrap() > 0,
        "the tiny image did not load: {width}"
    );

    // A tool's error is shown as one.
    call_from_form(c, "apps__fail", &[("reason", "the disk is full")]).await;
    text_of(
        c,
        "#tool-detail .call-result .result.error",
        "the disk is full",
    )
    .await;

    // A sound a tool returns plays: the browser reads its length.
    call_from_form(c, "apps__tone", &[]).await;
    element(c, "#tool-detail .call-result audio").await;
    let deadline = std::time::Instant::now() + PATIENCE;
    let seconds = loop {
        let duration = c
            .execute(
                "const a = document.querySelector('#tool-detail .call-result audio'); return a.readyState >= 1 ? a.duration : null",
                vec![],
            )
            .await
            .unwrap();
        if let Some(seconds) = duration.as_f64() {
            break seconds;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the sound never loaded"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        (seconds - 0.25).abs() < 0.01,
        "a quarter of a second: {seconds}"
    );

    click(c, "#tabs button[data-tab=resources]").await;
    click(c, "#resource-list li[data-uri=\"image://fixture/dot.png\"]").await;
    element(c, "#resource-detail img").await;
    let width = c
        .execute("const i = document.querySelector('#resource-detail img'); return i.complete ? i.naturalWidth : -1", vec![])
        .await
        .unwrap();
    assert_eq!(width, json!(4), "the image resource is 4 pixels wide");

    // A template filled in, and a prompt's messages previewed.
    click(
        c,
        "#template-list li[data-template=\"demo://resource/dynamic/text/{resourceId}\"]",
    )
    .await;
    type_into(c, "#resource-detail input[name=resourceId]", "7").await;
    click(c, "#resource-detail form.schema button[type=submit]").await;
    text_of(
        c,
        "#resource-detail .contents",
        "Resource 7: This is a plaintext resource",
    )
    .await;
    click(c, "#tabs button[data-tab=prompts]").await;
    click(
        c,
        "#prompt-list li[data-prompt=\"everything__args-prompt\"]",
    )
    .await;
    type_into(c, "#prompt-detail input[name=city]", "Lyon").await;
    click(c, "#prompt-detail form.schema button[type=submit]").await;
    text_of(c, "#prompt-detail .preview", "What's weather in Lyon").await;

    // A server's question is a form in the page.
    call_from_form(c, "everything__trigger-elicitation-request", &[]).await;
    let name = element(c, ".question.elicitation input[name=name]").await;
    name.send_keys("Ada Lovelace").await.unwrap();
    screenshot(c, "elicitation").await;
    click(c, ".question.elicitation button[type=submit]").await;
    text_of(c, "#tool-detail .call-result", "Ada Lovelace").await;
    assert!(
        c.find(Locator::Css(".question")).await.is_err(),
        "the form stays open"
    );

    // An MCP App: rendered in its frame, fed the tool's input and result, its own
    // tool call asked for approval.
    call_from_form(c, "apps__show_counter", &[("start", "41")]).await;
    let frame = element(c, "#tool-detail iframe.app").await;
    assert_eq!(
        frame.attr("sandbox").await.unwrap().as_deref(),
        Some("allow-scripts allow-forms")
    );
    frame.clone().enter_frame().await.unwrap();
    text_of(c, "#count", "41").await;
    text_of(c, "#isolation", "isolated").await;
    text_of(c, "#status", "input {\"start\":41}").await;
    element(c, "body[data-host=prise]").await;
    click(c, "#plus").await;
    c.enter_parent_frame().await.unwrap();
    text_of(c, ".question.approval h3", "increment").await;
    screenshot(c, "app-approval").await;
    click(c, ".question.approval button.allow").await;
    enter_app(c, "#tool-detail iframe.app").await;
    text_of(c, "#count", "42").await;
    text_of(c, "#status", "incremented").await;
    click(c, "#plus").await;
    c.enter_parent_frame().await.unwrap();
    click(c, ".question.approval button.deny").await;
    enter_app(c, "#tool-detail iframe.app").await;
    text_of(
        c,
        "#status",
        "refused: apps__increment was not run: declined by the user",
    )
    .await;
    assert_eq!(
        c.find(Locator::Css("#count"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
        "42"
    );
    c.enter_parent_frame().await.unwrap();
    screenshot(c, "app").await;

    // The trace saw the calls, both ways.
    click(c, "#tabs button[data-tab=trace]").await;
    let trace = text_of(c, "#trace-list", "tools/call").await;
    assert!(trace.contains("→") && trace.contains("←"), "{trace}");
    assert!(
        trace.contains("initialize"),
        "the trace begins with the handshake: {trace}"
    );
    type_into(c, "#trace-filter", "elicitation/create").await;
    let shown = c
        .execute("return [...document.querySelectorAll('#trace-list li')].filter(li => !li.hidden).length", vec![])
        .await
        .unwrap();
    assert!(
        matches!(shown.as_u64(), Some(1..=3)),
        "the filter shows the elicitation only: {shown}"
    );
    browser.close().await;
    drop(ui);
}

/// A chat turn against the scripted model double: the model calls a tool, the page
/// asks for approval, the answer streams in, the call is folded in the log; a second
/// tab shows the same conversation.
#[tokio::test]
async fn a_chat_turn_asks_in_the_page_and_shows_in_every_tab() {
    let home = tempfile::tempdir().unwrap();
    configure(home.path(), json!({"approval": {"allowReadOnly": false}}));
    let model = ScriptedModel::start(vec![
        Scripted::tool_call(
            "c1",
            "everything__echo",
            json!({"message": "from the model"}),
        ),
        Scripted::answer("The server said **Echo: from the model**."),
        Scripted::tool_call("c2", "apps__show_counter", json!({"start": 5})),
        Scripted::tool_call("c3", "everything__trigger-elicitation-request", json!({})),
        Scripted::answer("Thank you."),
    ])
    .await;
    let ui = Ui::start(
        home.path(),
        &["-m", "openai-compatible:fake", "--base-url", &model.url],
    );
    let browser = Browser::start().await;
    let c = browser.client();
    c.goto(&format!("{}#chat", ui.url)).await.unwrap();
    element(c, "body[data-ready=true]").await;
    text_of(c, "#chat-model", "fake").await;
    type_into(c, "#chat-input", "Echo something").await;
    click(c, "#chat-send").await;
    text_of(c, ".question.approval h3", "echo").await;
    click(c, ".question.approval button.allow").await;
    let answer = text_of(c, "#chat-log .msg.assistant", "Echo: from the model").await;
    assert!(answer.contains("The server said"), "{answer}");
    let strong = element(c, "#chat-log .msg.assistant strong").await;
    assert_eq!(strong.text().await.unwrap(), "Echo: from the model");
    let call = element(c, "#chat-log details.call[data-tool=everything__echo]").await;
    assert!(call.text().await.unwrap().contains("ok"));
    screenshot(c, "chat").await;

    // What the model was sent: the tool's result, after the person allowed it.
    let requests = model.requests();
    assert_eq!(requests.len(), 2, "{:?}", ui.stderr.lock().unwrap());
    assert!(
        requests[1]
            .tool_results()
            .iter()
            .any(|r| r.contains("Echo: from the model"))
    );

    // The model's call of a tool with an app shows the app in the chat; a server's
    // question during the turn is a form in the page, its answer reaches the model.
    type_into(c, "#chat-input", "Show a counter, then ask my name").await;
    click(c, "#chat-send").await;
    text_of(c, ".question.approval h3", "show_counter").await;
    click(c, ".question.approval button.allow").await;
    let frame = element(
        c,
        "#chat-log details.call[data-tool=apps__show_counter] iframe.app",
    )
    .await;
    text_of(c, ".question.approval h3", "trigger-elicitation-request").await;
    click(c, ".question.approval button.allow").await;
    let name = element(c, ".question.elicitation input[name=name]").await;
    name.send_keys("Grace Hopper").await.unwrap();
    click(c, ".question.elicitation button[type=submit]").await;
    text_of(c, "#chat-log", "Thank you.").await;
    let requests = model.requests();
    assert_eq!(requests.len(), 5);
    assert!(
        requests[4]
            .tool_results()
            .iter()
            .any(|r| r.contains("Grace Hopper")),
        "{:?}",
        requests[4].tool_results()
    );
    click(
        c,
        "#chat-log details.call[data-tool=apps__show_counter] summary",
    )
    .await;
    frame.enter_frame().await.unwrap();
    text_of(c, "#count", "5").await;
    c.enter_parent_frame().await.unwrap();

    // A second tab sees the same conversation.
    let tab = c.new_window(true).await.unwrap();
    c.switch_to_window(tab.handle).await.unwrap();
    c.goto(&format!("{}/#chat", ui.origin())).await.unwrap();
    element(c, "body[data-ready=true]").await;
    text_of(c, "#chat-log .msg.user", "Echo something").await;
    text_of(c, "#chat-log .msg.assistant", "The server said").await;
    let session = current_text(c, "#chat-model").await;
    let session = session.rsplit("session ").next().unwrap().to_owned();
    drop(ui);

    // Another run of the page resumes the saved session: its exchanges are shown, and
    // the model is sent them with the next question.
    let model = ScriptedModel::start(vec![Scripted::answer("Still here.")]).await;
    let ui = Ui::start(
        home.path(),
        &["-m", "openai-compatible:fake", "--base-url", &model.url],
    );
    c.goto(&format!("{}#chat", ui.url)).await.unwrap();
    element(c, "body[data-ready=true]").await;
    element(c, &format!("#chat-sessions option[value=\"{session}\"]"))
        .await
        .click()
        .await
        .unwrap();
    click(c, "#chat-resume").await;
    text_of(c, "#chat-log .msg.user", "Echo something").await;
    text_of(c, "#chat-model", &session).await;
    type_into(c, "#chat-input", "Are you there?").await;
    click(c, "#chat-send").await;
    text_of(c, "#chat-log", "Still here.").await;
    let sent = model.requests()[0].body.to_string();
    assert!(
        sent.contains("Echo something") && sent.contains("Are you there?"),
        "{sent}"
    );
    browser.close().await;
}

/// One raw HTTP/1.1 GET, with `headers`; the status code.
fn status_of(origin: &str, path: &str, headers: &[(&str, String)]) -> u16 {
    let response = get(origin, path, headers);
    response
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status in {response:?}"))
}

/// One raw HTTP/1.1 GET, with `headers`; the whole response.
fn get(origin: &str, path: &str, headers: &[(&str, String)]) -> String {
    let address = origin.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    let mut request = format!("GET {path} HTTP/1.1\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

/// Requests without the token, with a foreign Host or from a foreign Origin are
/// refused, whatever they ask for.
#[test]
fn requests_without_the_token_or_from_elsewhere_are_refused() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join(".mcp.json"), r#"{"mcpServers": {}}"#).unwrap();
    let ui = Ui::start(home.path(), &[]);
    let origin = ui.origin();
    let host = origin.trim_start_matches("http://").to_owned();
    let cookie = format!("prise_ui={}", ui.token());
    for path in ["/", "/api/state", "/api/events", "/assets/app.js"] {
        assert_eq!(
            status_of(&origin, path, &[("Host", host.clone())]),
            401,
            "{path}"
        );
        assert_eq!(
            status_of(
                &origin,
                path,
                &[
                    ("Host", "evil.example".to_owned()),
                    ("Cookie", cookie.clone())
                ]
            ),
            403,
            "{path} with a foreign Host"
        );
        for foreign in ["http://evil.example", "null"] {
            assert_eq!(
                status_of(
                    &origin,
                    path,
                    &[
                        ("Host", host.clone()),
                        ("Cookie", cookie.clone()),
                        ("Origin", foreign.to_owned())
                    ]
                ),
                403,
                "{path} from {foreign}"
            );
        }
    }
    assert_eq!(
        status_of(
            &origin,
            "/api/state",
            &[("Host", host.clone()), ("Cookie", cookie.clone())]
        ),
        200
    );
    // The page itself is served under a policy that loads nothing from elsewhere.
    let page = get(
        &origin,
        "/",
        &[("Host", host.clone()), ("Cookie", cookie.clone())],
    );
    let page = page.to_lowercase();
    assert!(page.starts_with("http/1.1 200"), "{page}");
    assert!(
        page.contains("content-security-policy: default-src 'none'; script-src 'self';"),
        "{page}"
    );
    assert!(page.contains("frame-ancestors 'none'"), "{page}");
    assert_eq!(
        status_of(
            &origin,
            "/api/state",
            &[("Host", host.clone()), ("Cookie", "prise_ui=0".to_owned())]
        ),
        401
    );
}

/// A port already taken, or an address no browser can open, is a usage error that
/// says what to change.
#[test]
fn a_page_that_cannot_be_served_is_a_usage_error() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join(".mcp.json"), r#"{"mcpServers": {}}"#).unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let out = common::prise(home.path())
        .args(["ui", "--no-open", "--port", &port])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("cannot serve the page on 127.0.0.1:{port}")),
        "{stderr}"
    );
    assert!(stderr.contains("--port"), "{stderr}");
    let out = common::prise(home.path())
        .args(["ui", "--no-open", "--listen", "0.0.0.0"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--listen 0.0.0.0 names no address a browser can open"),
        "{stderr}"
    );
}
