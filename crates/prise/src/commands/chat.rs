//! `prise chat`: a conversation with the agent, in the terminal or over a pipe.
//!
//! Lines are read on a thread of their own (line editing blocks), one at a time: the
//! prompt appears only when the previous answer is finished. Ctrl-C during a turn
//! cancels that turn and its tool calls (servers get `notifications/cancelled`), not
//! the chat; Ctrl-D or `/quit` ends it.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use prise_agent::{AgentError, AgentEvent};
use prise_llm::StopReason;
use rustyline::error::ReadlineError;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::cli::ChatArgs;
use crate::commands::run::{agent, model, model_failure, model_spec, print_trace};
use crate::commands::session::{Session, transcript};
use crate::failure::Failure;
use crate::markdown::TerminalMarkdown;
use crate::output::{printable, revealed};

const HELP: &str =
    "/tools  /servers  /SERVER__PROMPT args (or /prompt NAME args)  /clear  /save [FILE.md]  /quit";

/// Runs the conversation until end of input or `/quit`.
pub async fn run(config: Option<&Path>, roots: &[PathBuf], args: ChatArgs) -> Result<(), Failure> {
    let config = crate::commands::config::load(config)?;
    let model_name = model_spec(&args.agent, config.as_ref())?;
    let model = model(&args.agent, config.as_ref())?;
    let (mut agent, mounts) = agent(config, roots, &args.agent, model).await?;
    let resume = args
        .resume
        .as_deref()
        .map(|id| if id.is_empty() { None } else { Some(id) });
    let (mut session, messages) = Session::open(resume.flatten(), matches!(resume, Some(None)))?;
    let resumed = messages.len();
    agent.resume(messages);
    let interactive = std::io::stdin().is_terminal();
    // Answers are rendered as Markdown for a person, and left as written for a pipe
    // (or when NO_COLOR asks for plain text).
    let styled = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    tokio::spawn(print_events(agent.subscribe(), styled));
    if interactive && resumed > 0 {
        eprintln!("resumed session {} ({resumed} messages)", session.id);
    }
    if interactive {
        let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        eprintln!(
            "prise chat with {model_name}: {} from {}. {HELP}",
            count(mounts.tools().len(), "tool"),
            count(mounts.mounts().len(), "server")
        );
    }
    let mut commands: Vec<String> = BUILT_IN.iter().map(|c| (*c).to_owned()).collect();
    commands.extend(mounts.prompts().into_iter().map(|p| format!("/{}", p.name)));
    let (ready, mut lines) = read_lines(interactive, SlashCommands(commands));
    loop {
        if ready.send(()).is_err() {
            break;
        }
        let Some(line) = lines.recv().await.flatten() else {
            break;
        };
        let prompt = match Input::parse(&line) {
            Input::Nothing => continue,
            Input::Quit => break,
            Input::Ask(text) => text.to_owned(),
            Input::Prompt("", _) => {
                eprintln!("usage: /prompt server__name ARGS, or /server__name ARGS");
                continue;
            }
            Input::Prompt(name, arguments) => match prompt_text(&mounts, name, arguments).await {
                Ok(text) => text,
                Err(e) => {
                    eprintln!("error: {e}");
                    continue;
                }
            },
            Input::Help => {
                eprintln!("{HELP}");
                continue;
            }
            Input::Clear => {
                agent.clear();
                eprintln!("(conversation cleared)");
                continue;
            }
            Input::Tools => {
                print_tools(&mounts);
                continue;
            }
            Input::Servers => {
                print_servers(&mounts);
                continue;
            }
            Input::Save => {
                match session.save(agent.history()) {
                    Ok(()) => eprintln!(
                        "(saved in {}; continue with: prise chat --resume {})",
                        session.path().display(),
                        session.id
                    ),
                    Err(e) => eprintln!("error: cannot save the session: {e}"),
                }
                continue;
            }
            Input::SaveTranscript(path) => {
                let path = Path::new(path);
                match write_new(path, &transcript(agent.history())) {
                    Ok(()) => eprintln!("(transcript written to {})", path.display()),
                    Err(e) => eprintln!("error: cannot write {}: {e}", path.display()),
                }
                continue;
            }
            // Every mounted prompt is a command of its own name.
            Input::Unknown(command, arguments)
                if mounts.prompts().iter().any(|p| p.name == command[1..]) =>
            {
                match prompt_text(&mounts, &command[1..], arguments).await {
                    Ok(text) => text,
                    Err(e) => {
                        eprintln!("error: {e}");
                        continue;
                    }
                }
            }
            Input::Unknown(command, _) => {
                eprintln!("unknown command {command}; {HELP}");
                continue;
            }
        };
        tokio::select! {
            outcome = agent.run(&prompt) => {
                // Let the printer catch up with the last deltas before the newline.
                tokio::task::yield_now().await;
                match outcome {
                    Ok(_) => println!(),
                    // A model that cannot be reached ends the chat; one that failed this
                    // turn does not.
                    Err(AgentError::Model(e)) => match model_failure(e) {
                        Failure::Job(error) => eprintln!("\nerror: {error:#}"),
                        failure => return Err(failure),
                    },
                    Err(e) => eprintln!("\nerror: {e}"),
                }
            }
            _ = tokio::signal::ctrl_c() => {
                if styled {
                    // The answer may have stopped inside a bold or a code block.
                    print!("{}", crate::markdown::RESET);
                }
                eprintln!("\n(cancelled)");
            }
        }
        if let Err(e) = session.save(agent.history()) {
            eprintln!("warning: cannot save the session: {e}");
        }
    }
    drop(agent);
    if interactive {
        eprintln!("saved; continue with: prise chat --resume {}", session.id);
    }
    if let Ok(mounts) = std::sync::Arc::try_unwrap(mounts) {
        mounts.close().await;
    }
    Ok(())
}

/// One line typed in the chat.
#[derive(Debug, PartialEq)]
enum Input<'a> {
    /// A blank line.
    Nothing,
    /// A question for the agent.
    Ask(&'a str),
    /// `/prompt NAME ARGS`: the prompt's name and its arguments' text.
    Prompt(&'a str, &'a str),
    Help,
    Clear,
    Tools,
    Servers,
    /// `/save`: save the session now and say where.
    Save,
    /// `/save FILE`: write a Markdown transcript.
    SaveTranscript(&'a str),
    Quit,
    /// Another `/word`, and the rest of the line: a prompt's name, or a mistake.
    Unknown(&'a str, &'a str),
}

impl<'a> Input<'a> {
    fn parse(line: &'a str) -> Input<'a> {
        let line = line.trim();
        let (command, rest) = line.split_once(' ').unwrap_or((line, ""));
        let rest = rest.trim();
        match command {
            "" => Input::Nothing,
            "/quit" | "/exit" => Input::Quit,
            "/help" => Input::Help,
            "/clear" => Input::Clear,
            "/tools" => Input::Tools,
            "/servers" => Input::Servers,
            "/save" if rest.is_empty() => Input::Save,
            "/save" => Input::SaveTranscript(rest),
            "/prompt" => {
                let (name, arguments) = rest.split_once(' ').unwrap_or((rest, ""));
                Input::Prompt(name, arguments.trim())
            }
            command if command.starts_with('/') => Input::Unknown(command, rest),
            _ => Input::Ask(line),
        }
    }
}

/// Prints the agent's events: answers on stdout as they stream, the tool trace on
/// stderr.
async fn print_events(mut events: mpsc::UnboundedReceiver<AgentEvent>, styled: bool) {
    let mut markdown = TerminalMarkdown::new();
    // Whether the model's text left the cursor mid-line ("Let me check."), where a
    // trace line must not be glued.
    let mut mid_line = false;
    // The answer starts on a line of its own after the thoughts.
    let mut thinking = false;
    while let Some(event) = events.recv().await {
        let text = match event {
            AgentEvent::ModelDelta(text) if styled => {
                // A model can be talked into writing escape sequences by what it read.
                let text = markdown.push(&printable(&text));
                if thinking && !text.is_empty() {
                    thinking = false;
                    if mid_line { format!("\n{text}") } else { text }
                } else {
                    text
                }
            }
            AgentEvent::ModelDelta(text) => text,
            // Thoughts are shown dimmed to a person, and kept out of piped output.
            AgentEvent::ModelReasoning(text) if styled => {
                thinking = true;
                format!(
                    "{}{}{}",
                    crate::markdown::THOUGHT,
                    printable(&text),
                    crate::markdown::RESET
                )
            }
            AgentEvent::ModelReasoning(_) => continue,
            // A turn cancelled mid-answer leaves styles open: the next starts clean.
            AgentEvent::TurnStart { .. } if styled => markdown.finish(),
            AgentEvent::TurnEnd { ref stop, .. } => {
                let text = if styled {
                    markdown.finish()
                } else {
                    String::new()
                };
                write_out(&text, &mut mid_line);
                if *stop == StopReason::Length {
                    if mid_line {
                        println!();
                        mid_line = false;
                    }
                    print_trace(&event);
                }
                continue;
            }
            AgentEvent::TurnStart { .. } => continue,
            other => {
                if mid_line {
                    println!();
                    mid_line = false;
                }
                print_trace(&other);
                continue;
            }
        };
        write_out(&text, &mut mid_line);
    }
}

/// Prints the model's text and notes whether it left the cursor mid-line.
fn write_out(text: &str, mid_line: &mut bool) {
    let visible = crate::markdown::without_trailing_styles(text);
    if !visible.is_empty() {
        *mid_line = !visible.ends_with('\n');
    }
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// `/tools`: each tool's exposed name and the first line of its description.
fn print_tools(mounts: &prise_mcp::Mounts) {
    for tool in mounts.tools() {
        let description = tool.tool.description.as_deref().unwrap_or("");
        let line = format!(
            "{}  {}",
            tool.name,
            description.lines().next().unwrap_or("")
        );
        println!("{}", revealed(&line));
    }
}

/// `/servers`: each server and its state.
fn print_servers(mounts: &prise_mcp::Mounts) {
    for (name, state) in mounts.states() {
        let state = match state {
            prise_mcp::ServerState::Ready => "ready".to_owned(),
            prise_mcp::ServerState::Failed(e) => format!("failed: {}", e.cause),
            prise_mcp::ServerState::Disabled => "disabled".to_owned(),
        };
        println!("{}", revealed(&format!("{name}  {state}")));
    }
}

/// Writes a file that must not exist yet: a transcript never replaces anything.
fn write_new(path: &Path, text: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    file.write_all(text.as_bytes())
}

/// The user text of a mounted prompt, its arguments read from `text` (see
/// [`prompt_arguments`]).
async fn prompt_text(mounts: &prise_mcp::Mounts, name: &str, text: &str) -> Result<String, String> {
    let declared: Vec<(String, bool)> = mounts
        .prompts()
        .into_iter()
        .find(|p| p.name == name)
        .map(|p| {
            p.prompt
                .arguments
                .unwrap_or_default()
                .into_iter()
                .map(|a| (a.name, a.required.unwrap_or(false)))
                .collect()
        })
        .ok_or_else(|| format!("no prompt named {name}; `prise prompts` lists them"))?;
    let arguments = prompt_arguments(name, &declared, text)?;
    let result = mounts
        .get_prompt(name, Some(arguments))
        .await
        .map_err(|e| e.to_string())?;
    let texts: Vec<String> = result
        .messages
        .iter()
        .filter_map(|m| match &m.content {
            prise_mcp::model::ContentBlock::Text(text) => Some(text.text.clone()),
            _ => None,
        })
        .collect();
    if texts.iter().all(|t| t.trim().is_empty()) {
        return Err(format!("prompt {name} gave no text to send"));
    }
    Ok(texts.join("\n\n"))
}

/// A prompt's arguments from what follows its command: `key=value` pairs (quotes keep
/// spaces: `key="a b"`), and words for the declared arguments in order. A prompt with
/// one argument takes the whole text, as Claude Code does: `/docs__cite_answer How are
/// servers restarted?`.
fn prompt_arguments(
    name: &str,
    declared: &[(String, bool)],
    text: &str,
) -> Result<serde_json::Map<String, Value>, String> {
    let mut arguments = serde_json::Map::new();
    let names = || {
        declared
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    fn keyed<'w>(word: &'w str, declared: &[(String, bool)]) -> Option<(&'w str, &'w str)> {
        word.split_once('=')
            .filter(|(key, _)| declared.iter().any(|(n, _)| n == key))
    }
    let words = split_words(text)?;
    if declared.len() == 1 && !words.iter().any(|w| keyed(w, declared).is_some()) {
        if !text.is_empty() {
            arguments.insert(declared[0].0.clone(), Value::String(text.to_owned()));
        }
    } else {
        let mut positional = Vec::new();
        for word in &words {
            match keyed(word, declared) {
                Some((key, value)) => {
                    arguments.insert(key.to_owned(), Value::String(value.to_owned()));
                }
                None => positional.push(word.clone()),
            }
        }
        let free: Vec<&String> = declared
            .iter()
            .map(|(n, _)| n)
            .filter(|n| !arguments.contains_key(*n))
            .collect();
        let mut free = free.into_iter();
        for word in positional {
            let Some(slot) = free.next() else {
                return Err(format!(
                    "{name} takes {}; {word:?} is one too many",
                    if declared.is_empty() {
                        "no arguments".to_owned()
                    } else {
                        names()
                    }
                ));
            };
            arguments.insert(slot.clone(), Value::String(word));
        }
    }
    let missing: Vec<&str> = declared
        .iter()
        .filter(|(n, required)| *required && !arguments.contains_key(n))
        .map(|(n, _)| n.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "{name} needs {}; e.g. /{name} {}",
            missing.join(", "),
            missing
                .iter()
                .map(|n| format!("{n}=..."))
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    Ok(arguments)
}

/// Words as a shell would split them, without expansions: quotes keep spaces.
fn split_words(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_default().push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                word.get_or_insert_default();
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_default().push(c),
        }
    }
    if let Some(q) = quote {
        return Err(format!("unclosed {q} in {text:?}"));
    }
    words.extend(word);
    Ok(words)
}

/// The commands that are not prompts, for completion.
const BUILT_IN: [&str; 8] = [
    "/tools", "/servers", "/prompt", "/clear", "/save", "/help", "/quit", "/exit",
];

/// Tab completes the command being typed at the start of a line.
struct SlashCommands(Vec<String>);

impl rustyline::completion::Completer for SlashCommands {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        let typed = &line[..pos];
        if !typed.starts_with('/') || typed.contains(' ') {
            return Ok((0, Vec::new()));
        }
        let matches = self
            .0
            .iter()
            .filter(|c| c.starts_with(typed))
            .map(|c| format!("{c} "))
            .collect();
        Ok((0, matches))
    }
}

impl rustyline::hint::Hinter for SlashCommands {
    type Hint = String;
}
impl rustyline::highlight::Highlighter for SlashCommands {}
impl rustyline::validate::Validator for SlashCommands {}
impl rustyline::Helper for SlashCommands {}

/// A thread that reads one line each time it is told to, with line editing and
/// history in a terminal. `None` means end of input.
fn read_lines(
    interactive: bool,
    completion: SlashCommands,
) -> (
    std::sync::mpsc::Sender<()>,
    mpsc::UnboundedReceiver<Option<String>>,
) {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<()>();
    let (line_tx, line_rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let history = prise_mcp::child::default_state_dir().map(|dir| dir.join("chat_history"));
        let mut editor =
            rustyline::Editor::<SlashCommands, rustyline::history::DefaultHistory>::new().ok();
        if let Some(editor) = editor.as_mut() {
            editor.set_helper(Some(completion));
            if let Some(path) = &history {
                let _ = editor.load_history(path);
            }
        }
        let stdin = std::io::stdin();
        while ready_rx.recv().is_ok() {
            let line = match editor.as_mut().filter(|_| interactive) {
                Some(editor) => loop {
                    match editor.readline("› ") {
                        Ok(line) => {
                            let _ = editor.add_history_entry(line.as_str());
                            break Some(line);
                        }
                        // Ctrl-C at the prompt clears the line, as in a shell.
                        Err(ReadlineError::Interrupted) => continue,
                        Err(_) => break None,
                    }
                },
                None => {
                    let mut line = String::new();
                    match stdin.read_line(&mut line) {
                        Ok(0) | Err(_) => None,
                        Ok(_) => Some(line),
                    }
                }
            };
            let done = line.is_none();
            if line_tx.send(line).is_err() || done {
                break;
            }
        }
        if let (Some(editor), Some(path)) = (editor.as_mut(), &history) {
            if let Some(dir) = path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let _ = editor.save_history(path);
        }
    });
    (ready_tx, line_rx)
}

#[cfg(test)]
mod tests {
    use super::Input;

    #[test]
    fn prompt_arguments_by_name_by_position_or_whole() {
        use super::prompt_arguments;
        use serde_json::json;
        let one = [("question".to_owned(), true)];
        assert_eq!(
            prompt_arguments("p", &one, "How are servers restarted?").unwrap(),
            *json!({"question": "How are servers restarted?"})
                .as_object()
                .unwrap()
        );
        assert_eq!(
            prompt_arguments("p", &one, r#"question="a b""#).unwrap(),
            *json!({"question": "a b"}).as_object().unwrap()
        );
        assert_eq!(
            prompt_arguments("p", &one, "").unwrap_err(),
            "p needs question; e.g. /p question=..."
        );
        let two = [("city".to_owned(), true), ("unit".to_owned(), false)];
        assert_eq!(
            prompt_arguments("w", &two, "'New York' unit=f").unwrap(),
            *json!({"city": "New York", "unit": "f"})
                .as_object()
                .unwrap()
        );
        assert_eq!(
            prompt_arguments("w", &two, "Paris c extra").unwrap_err(),
            "w takes city, unit; \"extra\" is one too many"
        );
        assert!(
            prompt_arguments("w", &two, "\"Paris")
                .unwrap_err()
                .starts_with("unclosed")
        );
        assert_eq!(
            prompt_arguments("n", &[], "x").unwrap_err(),
            "n takes no arguments; \"x\" is one too many"
        );
    }

    #[test]
    fn lines_are_questions_or_commands() {
        assert_eq!(Input::parse("  "), Input::Nothing);
        assert_eq!(
            Input::parse(" what is /tmp for? "),
            Input::Ask("what is /tmp for?")
        );
        assert_eq!(Input::parse("/save"), Input::Save);
        assert_eq!(
            Input::parse("/save  talk.md "),
            Input::SaveTranscript("talk.md")
        );
        assert_eq!(
            Input::parse("/prompt docs__cite_answer question=x"),
            Input::Prompt("docs__cite_answer", "question=x")
        );
        assert_eq!(Input::parse("/exit"), Input::Quit);
        assert_eq!(Input::parse("/tool"), Input::Unknown("/tool", ""));
        assert_eq!(
            Input::parse("/docs__cite_answer How are  servers stopped?"),
            Input::Unknown("/docs__cite_answer", "How are  servers stopped?")
        );
    }
}
