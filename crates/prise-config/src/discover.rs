//! Where prise looks for a configuration when none is named, and how the files it
//! finds are combined.
//!
//! A project may carry its servers in `.mcp.json` (Claude Code), `.vscode/mcp.json`
//! (VS Code) or `.cursor/mcp.json` (Cursor), and the person has a file of their own.
//! As Claude Code does with its scopes, prise reads all of them and merges them: the
//! project's files first, in that order, then the user's; a name defined twice keeps
//! the first definition (the project's), and the hidden one is noted.

use std::path::{Path, PathBuf};

use crate::{Config, ConfigError};

/// The project's files, in order of precedence, in `cwd`.
pub fn project_files(cwd: &Path) -> Vec<PathBuf> {
    [".mcp.json", ".vscode/mcp.json", ".cursor/mcp.json"]
        .iter()
        .map(|name| cwd.join(name))
        .collect()
}

/// The user's files, in order of preference: prise's own in the user's config
/// directory, then `~/.mcp.json`. Only the first that exists is read.
pub fn user_files(env: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let home = env("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    let mut paths = Vec::new();
    if let Some(xdg) = env("XDG_CONFIG_HOME").filter(|x| Path::new(x).is_absolute()) {
        paths.push(Path::new(&xdg).join("prise/mcp.json"));
    }
    if let Some(home) = &home {
        paths.push(home.join(".config/prise/mcp.json"));
        paths.push(home.join(".mcp.json"));
    }
    paths.dedup();
    paths
}

/// Apps whose MCP configuration `prise import` copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum App {
    /// Claude Desktop's `claude_desktop_config.json`.
    ClaudeDesktop,
    /// Cursor's global `~/.cursor/mcp.json`.
    Cursor,
    /// VS Code's user `mcp.json`.
    VsCode,
}

/// Where `app` keeps its servers on Linux and macOS, in the order to look.
pub fn app_files(app: App, env: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let Some(home) = env("HOME").filter(|h| !h.is_empty()).map(PathBuf::from) else {
        return Vec::new();
    };
    let config = env("XDG_CONFIG_HOME")
        .filter(|x| Path::new(x).is_absolute())
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".config"));
    let mac = home.join("Library/Application Support");
    match app {
        App::ClaudeDesktop => vec![
            config.join("Claude/claude_desktop_config.json"),
            mac.join("Claude/claude_desktop_config.json"),
        ],
        App::Cursor => vec![home.join(".cursor/mcp.json")],
        App::VsCode => vec![
            config.join("Code/User/mcp.json"),
            mac.join("Code/User/mcp.json"),
        ],
    }
}

/// Every file looked for, project files first.
pub fn candidates(cwd: &Path, env: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let mut paths = project_files(cwd);
    paths.extend(user_files(env));
    paths.dedup();
    paths
}

impl Config {
    /// Loads and merges the project's files that exist in `cwd` and the first user
    /// file that exists; `None` when there is none.
    pub fn discover(cwd: &Path) -> Result<Option<Config>, ConfigError> {
        let env = |name: &str| std::env::var(name).ok();
        let mut found: Vec<PathBuf> = project_files(cwd)
            .into_iter()
            .filter(|p| p.is_file())
            .collect();
        found.extend(user_files(&env).into_iter().find(|p| p.is_file()));
        // Run from the home folder, ./.mcp.json is ~/.mcp.json: read it once.
        let mut seen = Vec::new();
        found.retain(|p| {
            let real = p.canonicalize().unwrap_or_else(|_| p.clone());
            let new = !seen.contains(&real);
            seen.push(real);
            new
        });
        let mut configs = found.iter().map(|path| Config::load(path));
        let Some(first) = configs.next() else {
            return Ok(None);
        };
        let mut config = first?;
        for lower in configs {
            config.merge_lower(lower?);
        }
        Ok(Some(config))
    }

    /// Adds a file of lower precedence: its servers whose names are not taken, its
    /// model settings where this configuration has none, its approval policy and
    /// roots when this one has none.
    pub fn merge_lower(&mut self, lower: Config) {
        for server in lower.servers {
            match self.servers.iter().find(|s| s.name == server.name) {
                Some(kept) => self.notes.push(format!(
                    "server {} of {} is hidden by the one of {}",
                    server.name,
                    server.file.display(),
                    kept.file.display()
                )),
                None => self.servers.push(server),
            }
        }
        let model = &mut self.model;
        let theirs = lower.model;
        model.name = model.name.take().or(theirs.name);
        model.base_url = model.base_url.take().or(theirs.base_url);
        model.api_key = model.api_key.take().or(theirs.api_key);
        model.max_turns = model.max_turns.or(theirs.max_turns);
        model.system_prompt = model.system_prompt.take().or(theirs.system_prompt);
        model.max_tool_output = model.max_tool_output.or(theirs.max_tool_output);
        model.tool_call_recovery = model.tool_call_recovery.or(theirs.tool_call_recovery);
        model.images = model.images.or(theirs.images);
        model.max_output_tokens = model.max_output_tokens.or(theirs.max_output_tokens);
        model.idle_timeout = model.idle_timeout.or(theirs.idle_timeout);
        model.temperature = model.temperature.or(theirs.temperature);
        model.top_p = model.top_p.or(theirs.top_p);
        model.seed = model.seed.or(theirs.seed);
        model.tool_choice = model.tool_choice.take().or(theirs.tool_choice);
        model.tool_call_retries = model.tool_call_retries.or(theirs.tool_call_retries);
        if !self.sets_approval && lower.sets_approval {
            self.approval = lower.approval;
            self.sets_approval = true;
        }
        if self.roots.is_empty() {
            self.roots = lower.roots;
        }
        if self.profiles.is_empty() {
            self.profiles = lower.profiles;
        }
        self.files.extend(lower.files);
        self.notes.extend(lower.notes);
        self.warnings.extend(lower.warnings);
    }
}

#[cfg(test)]
mod tests {
    use super::candidates;
    use std::path::PathBuf;

    #[test]
    fn order_is_project_files_then_user_dir_then_home() {
        let env = |name: &str| match name {
            "HOME" => Some("/home/u".to_owned()),
            "XDG_CONFIG_HOME" => Some("/xdg".to_owned()),
            _ => None,
        };
        let paths = candidates("/work".as_ref(), &env);
        let expected: Vec<PathBuf> = [
            "/work/.mcp.json",
            "/work/.vscode/mcp.json",
            "/work/.cursor/mcp.json",
            "/xdg/prise/mcp.json",
            "/home/u/.config/prise/mcp.json",
            "/home/u/.mcp.json",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(paths, expected);
    }

    #[test]
    fn relative_xdg_is_ignored_as_the_spec_says() {
        let env = |name: &str| (name == "XDG_CONFIG_HOME").then(|| "rel".to_owned());
        assert_eq!(candidates("/w".as_ref(), &env).len(), 3);
    }
}
