//! `prise chat`: a conversation with the agent, in the terminal or over a pipe.
//!
//! Lines are read on a thread of their own (line editing blocks), one at a time: the
//! prompt appears only when the previous answer is finished. Ctrl-C during a turn
//! cancels that turn and its tool calls (servers get `notifications/cancelled`), not
//! the chat; Ctrl-D or `/quit` ends it.

mod lines;
mod prompts;
mod screen;

use std::io::{IsTerminal, Write};
use std::path::Path;

use prise_agent::AgentError;

use lines::{BUILT_IN, SlashCommands, read_lines};
use prompts::prompt_text;
use screen::{print_events, print_servers, print_tools};

use crate::cli::ChatArgs;
use crate::commands::mounted::Servers;
use crate::commands::run::{agent, agent_failure, explained, model, model_spec, session_failure};
use crate::failure::Failure;
use prise_agent::session::{Session, last_exchanges, transcript};

const HELP: &str =
    "/tools  /servers  /SERVER__PROMPT args (or /prompt NAME args)  /clear  /save [FILE.md]  /quit";

/// Runs the conversation until end of input or `/quit`.
pub async fn run(servers: Servers, args: ChatArgs) -> Result<(), Failure> {
    let model_name = model_spec(&args.agent, servers.config.as_ref())?;
    let settings = servers.model_settings();
    let model = model(&args.agent, servers.config.as_ref())?;
    // Ctrl-C while mounting ends the chat (and every server started so far); after
    // that, it cancels a turn.
    let mut mounted = None;
    crate::signals::until_signal(async {
        mounted = Some(agent(servers, &args.agent, model).await?);
        Ok(())
    })
    .await?;
    let Some((mut agent, mounts)) = mounted else {
        return Ok(());
    };
    let resume = args
        .resume
        .as_deref()
        .map(|id| if id.is_empty() { None } else { Some(id) });
    let (mut session, messages) = Session::open(
        resume.flatten(),
        matches!(resume, Some(None)),
        &model_name.to_string(),
    )
    .map_err(session_failure)?;
    let resumed = messages.len();
    let recap = last_exchanges(&messages, RECAP);
    agent.resume(messages);
    let interactive = std::io::stdin().is_terminal();
    // Answers are rendered as Markdown for a person, and left as written for a pipe
    // (or when NO_COLOR asks for plain text).
    let styled = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    tokio::spawn(print_events(agent.subscribe(), mounts.subscribe(), styled));
    if resumed > 0 {
        eprintln!(
            "resumed session {} ({resumed} messages); where it left off:",
            session.id
        );
        print_recap(&recap);
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
                    Err(AgentError::Model(e)) => match explained(e, &args.agent, &settings).await {
                        Failure::Job(error) => eprintln!("\nerror: {error:#}"),
                        failure => return Err(failure),
                    },
                    Err(e) => match agent_failure(e, &model_name.to_string()) {
                        Failure::Job(error) => eprintln!("\nerror: {error:#}"),
                        failure => return Err(failure),
                    },
                }
            }
            _ = tokio::signal::ctrl_c() => {
                // A question the turn was asking goes with it: the next line typed is
                // for the model, not an answer to it.
                crate::question::cancel_open();
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

/// Exchanges shown when a session is resumed.
const RECAP: usize = 3;
/// Lines of each answer shown in the recap.
const RECAP_LINES: usize = 4;

/// The last exchanges of a resumed session, shortened, on stderr.
fn print_recap(exchanges: &[(String, String)]) {
    use crate::output::printable;
    for (question, answer) in exchanges {
        eprintln!("› {}", printable(question.lines().next().unwrap_or("")));
        let lines: Vec<&str> = answer.trim().lines().collect();
        for line in lines.iter().take(RECAP_LINES) {
            eprintln!("  {}", printable(line));
        }
        if lines.len() > RECAP_LINES {
            eprintln!("  …");
        }
    }
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

/// Writes a file that must not exist yet: a transcript never replaces anything.
fn write_new(path: &Path, text: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    file.write_all(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::Input;

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
