//! Where prise looks for a configuration when none is named.

use std::path::{Path, PathBuf};

use crate::{Config, ConfigError};

/// The files tried, in order, when `--config` is absent: the project's `.mcp.json`
/// (as Claude Code), then prise's own file in the user's config directory, then
/// `~/.mcp.json`.
pub fn candidates(cwd: &Path, env: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let home = env("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    let mut paths = vec![cwd.join(".mcp.json")];
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

impl Config {
    /// Loads the first of [`candidates`] that exists, or `None` when there is none.
    pub fn discover(cwd: &Path) -> Result<Option<Config>, ConfigError> {
        let env = |name: &str| std::env::var(name).ok();
        match candidates(cwd, &env).into_iter().find(|p| p.is_file()) {
            Some(path) => Config::load(&path).map(Some),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::candidates;
    use std::path::PathBuf;

    #[test]
    fn order_is_project_then_user_dir_then_home() {
        let env = |name: &str| match name {
            "HOME" => Some("/home/u".to_owned()),
            "XDG_CONFIG_HOME" => Some("/xdg".to_owned()),
            _ => None,
        };
        let paths = candidates("/work".as_ref(), &env);
        let expected: Vec<PathBuf> = [
            "/work/.mcp.json",
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
        assert_eq!(
            candidates("/w".as_ref(), &env),
            vec![PathBuf::from("/w/.mcp.json")]
        );
    }
}
