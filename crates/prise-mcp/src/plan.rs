//! Which configured servers a command needs, decided before any starts: a command
//! that names one server (`call S__T`, `tools S`) starts only that one, so a slow or
//! broken server elsewhere in the file costs it nothing. Names are never split at
//! `__`: every server whose name, then `__`, begins an exposed name may own it.

use std::path::PathBuf;

use prise_config::Server;

use crate::registry::{SEPARATOR, closest};

/// What a command needs mounted.
#[derive(Debug, Clone, Copy)]
pub enum Wanted<'a> {
    /// Every server (`servers`, `run`, `chat`, listings of everything).
    All,
    /// The server of this name (`tools S`, `read --server S`).
    Server(&'a str),
    /// The servers an exposed name `server__name` may belong to (`call`, `prompt`).
    Owner(&'a str),
}

/// Why a command's servers could not be chosen.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PlanError {
    /// No configured server has the name (or owns the exposed name).
    #[error(
        "no server named {name}{}{}",
        from.as_ref().map(|f| format!(" (in {f})")).unwrap_or_default(),
        suggestion.as_ref().map(|s| format!("; did you mean {s}?")).unwrap_or_default()
    )]
    NoServer {
        /// The name asked for.
        name: String,
        /// The exposed name it was read from, if any.
        from: Option<String>,
        /// The closest configured name, when one is close.
        suggestion: Option<String>,
    },
    /// The server is configured, and disabled.
    #[error("server {name} is disabled")]
    Disabled {
        /// The server.
        name: String,
        /// The file that disables it.
        file: PathBuf,
    },
}

impl Wanted<'_> {
    /// The names of the servers of `servers` this needs, in their order.
    pub fn select(self, servers: &[Server]) -> Result<Vec<String>, PlanError> {
        let enabled = |server: &Server| {
            if server.disabled {
                Err(PlanError::Disabled {
                    name: server.name.clone(),
                    file: server.file.clone(),
                })
            } else {
                Ok(server.name.clone())
            }
        };
        let names = || servers.iter().map(|s| s.name.as_str());
        match self {
            Wanted::All => Ok(names().map(str::to_owned).collect()),
            Wanted::Server(name) => match servers.iter().find(|s| s.name == name) {
                Some(server) => Ok(vec![enabled(server)?]),
                None => Err(no_server(name, names(), None)),
            },
            Wanted::Owner(exposed) => {
                let owners: Vec<&Server> = servers
                    .iter()
                    .filter(|s| {
                        exposed
                            .strip_prefix(s.name.as_str())
                            .and_then(|rest| rest.strip_prefix(SEPARATOR))
                            .is_some_and(|rest| !rest.is_empty())
                    })
                    .collect();
                let Some(first) = owners.first() else {
                    return Err(no_server(server_part(exposed), names(), Some(exposed)));
                };
                let enabled_owners: Vec<String> = owners
                    .iter()
                    .filter(|s| !s.disabled)
                    .map(|s| s.name.clone())
                    .collect();
                if enabled_owners.is_empty() {
                    return Err(enabled(first).unwrap_err());
                }
                Ok(enabled_owners)
            }
        }
    }

    /// With no configuration, only the server `embedded` exists: whether this asks
    /// for nothing else.
    pub fn select_only(self, embedded: &str) -> Result<(), PlanError> {
        let (server, from) = match self {
            Wanted::All => return Ok(()),
            Wanted::Server(name) => (name, None),
            Wanted::Owner(exposed) => (server_part(exposed), Some(exposed)),
        };
        if server == embedded {
            Ok(())
        } else {
            Err(no_server(server, [embedded], from))
        }
    }
}

/// The name a person meant as the server in `exposed`: what comes before `__`.
fn server_part(exposed: &str) -> &str {
    exposed
        .split_once(SEPARATOR)
        .map_or(exposed, |(server, _)| server)
}

fn no_server<'a>(
    name: &str,
    names: impl IntoIterator<Item = &'a str>,
    from: Option<&str>,
) -> PlanError {
    PlanError::NoServer {
        name: name.to_owned(),
        from: from.map(str::to_owned),
        suggestion: closest(name, names).map(str::to_owned),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn servers() -> Vec<Server> {
        let text = r#"{"mcpServers": {
            "git": {"command": "g"}, "git__hub": {"command": "h"},
            "off": {"command": "o", "disabled": true}}}"#;
        prise_config::Config::parse(text, "t.json".as_ref(), &|_| None)
            .unwrap()
            .servers
    }

    #[test]
    fn owners_are_found_without_splitting_names() {
        let servers = servers();
        assert_eq!(
            Wanted::Owner("git__hub__pr").select(&servers).unwrap(),
            ["git", "git__hub"]
        );
        assert_eq!(Wanted::Owner("git__x").select(&servers).unwrap(), ["git"]);
        let error = Wanted::Owner("gti__x").select(&servers).unwrap_err();
        assert_eq!(
            error.to_string(),
            "no server named gti (in gti__x); did you mean git?"
        );
        assert!(matches!(
            Wanted::Server("off").select(&servers),
            Err(PlanError::Disabled { .. })
        ));
        assert_eq!(Wanted::All.select(&servers).unwrap().len(), 3);
        assert!(Wanted::Owner("docs__grep").select_only("docs").is_ok());
        assert!(Wanted::Server("mine").select_only("docs").is_err());
    }
}
