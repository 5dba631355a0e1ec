//! Exposed names (`server__tool`) and the table that routes them back.
//!
//! Names are looked up, never split: a server called `a__b` with a tool `c` and a
//! server `a` with a tool `b__c` both produce `a__b__c`, and only a table can say
//! which one a name means (the first in configuration order; the other is reported).

use std::collections::HashMap;

/// Separator between server and tool in exposed names, as in mcphost.
pub const SEPARATOR: &str = "__";

/// The exposed name of a server's tool or prompt.
pub fn exposed_name(server: &str, name: &str) -> String {
    format!("{server}{SEPARATOR}{name}")
}

/// Where an exposed name leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// Index of the mount.
    pub mount: usize,
    /// The name on that server.
    pub name: String,
}

/// Exposed name → route, for tools or for prompts.
#[derive(Debug, Default, Clone)]
pub struct Registry {
    routes: HashMap<String, Route>,
    /// Names dropped because an earlier server already exposed them.
    pub conflicts: Vec<String>,
}

impl Registry {
    /// Builds the table from each mount's names, in mount order.
    pub fn build<'a>(mounts: impl IntoIterator<Item = (&'a str, Vec<String>)>) -> Registry {
        let mut registry = Registry::default();
        for (index, (server, names)) in mounts.into_iter().enumerate() {
            for name in names {
                let exposed = exposed_name(server, &name);
                match registry.routes.entry(exposed) {
                    std::collections::hash_map::Entry::Occupied(taken) => {
                        tracing::warn!(
                            "{} is exposed by two servers; {server}'s is hidden",
                            taken.key()
                        );
                        registry.conflicts.push(taken.key().clone());
                    }
                    std::collections::hash_map::Entry::Vacant(free) => {
                        free.insert(Route { mount: index, name });
                    }
                }
            }
        }
        registry
    }

    /// The route for an exposed name.
    pub fn get(&self, exposed: &str) -> Option<&Route> {
        self.routes.get(exposed)
    }

    /// The exposed name closest to `wanted`, if one is close enough to suggest.
    pub fn suggest(&self, wanted: &str) -> Option<String> {
        closest(wanted, self.routes.keys().map(String::as_str)).map(str::to_owned)
    }
}

pub use prise_config::closest;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_separators_route_by_table() {
        let registry = Registry::build([
            ("a__b", vec!["c".to_owned()]),
            ("a", vec!["b__c".to_owned(), "x__y".to_owned()]),
        ]);
        assert_eq!(
            registry.get("a__b__c"),
            Some(&Route {
                mount: 0,
                name: "c".into()
            })
        );
        assert_eq!(
            registry.get("a__x__y"),
            Some(&Route {
                mount: 1,
                name: "x__y".into()
            })
        );
        assert_eq!(registry.conflicts, ["a__b__c"]);
        assert_eq!(registry.get("a__b"), None);
    }

    #[test]
    fn suggestions() {
        let registry =
            Registry::build([("docs", vec!["grep_docs".to_owned(), "read_doc".to_owned()])]);
        assert_eq!(
            registry.suggest("docs__grep_doc"),
            Some("docs__grep_docs".into())
        );
        assert_eq!(registry.suggest("docs__something_else"), None);
    }
}
