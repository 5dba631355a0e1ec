//! Reading the person's lines: line editing, history and completion in a terminal,
//! plain lines from a pipe.

use rustyline::error::ReadlineError;
use tokio::sync::mpsc;

/// The commands that are not prompts, for completion.
pub const BUILT_IN: [&str; 8] = [
    "/tools", "/servers", "/prompt", "/clear", "/save", "/help", "/quit", "/exit",
];

/// Tab completes the command being typed at the start of a line.
pub struct SlashCommands(pub Vec<String>);

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
pub fn read_lines(
    interactive: bool,
    completion: SlashCommands,
) -> (
    std::sync::mpsc::Sender<()>,
    mpsc::UnboundedReceiver<Option<String>>,
) {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<()>();
    let (line_tx, line_rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let history = prise_config::state_dir().map(|dir| dir.join("chat_history"));
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
