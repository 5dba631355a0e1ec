//! Tool search: MCP tools ranked for a task said in words, offline, with no model: BM25 over each tool's name split into words, its title, description,
//! parameter names and descriptions, and its server's name, the words stemmed
//! (Snowball's English stemmer) and the query widened with the usual synonyms of
//! software (delete and remove, find and search, ticket and issue...); a tool whose
//! name starts with the action the query asks for (`create_`, `list_`; "what's in"
//! asks for a list) scores a little more.
//!
//! The agent searches with it (`prise_agent::offer`), and so do `prise tools --search`
//! and the gateway's `search_tools`. It knows tool definitions only: not mounting,
//! models or the command line.
//!
//! ```
//! use prise_search::ToolIndex;
//! use rmcp::model::Tool;
//!
//! let tool = |name: &str, description: &str| {
//!     Tool::new(name.to_owned(), description.to_owned(), serde_json::Map::new())
//! };
//! let (issue, message) = (
//!     tool("create_issue", "Opens a new issue in a repository."),
//!     tool("post_message", "Posts a message to a channel."),
//! );
//! let index = ToolIndex::new([
//!     ("github__create_issue", "github", &issue),
//!     ("slack__post_message", "slack", &message),
//! ]);
//! let found = index.search("file a bug ticket", 5);
//! assert_eq!(found[0].name, "github__create_issue");
//! ```

use std::collections::HashMap;

use rmcp::model::Tool;
use rust_stemmers::{Algorithm, Stemmer};
use serde::Serialize;
use serde_json::Value;

/// BM25's saturation of repeated words, and how much a long definition is discounted.
const K1: f32 = 1.2;
const B: f32 = 0.75;
/// How much a word counts in each part of a definition: a word of the tool's name says
/// more about what it does than one of a parameter's description.
const NAME: f32 = 3.0;
const TITLE: f32 = 2.0;
const SERVER: f32 = 1.5;
const DESCRIPTION: f32 = 1.0;
const PARAMETER: f32 = 1.5;
const PARAMETER_DESCRIPTION: f32 = 0.5;
/// How much a synonym of a query's word counts, against the word itself.
const SYNONYM: f32 = 0.4;

/// Words that say nothing of what a tool does.
const STOPWORDS: [&str; 44] = [
    "a", "an", "the", "of", "to", "in", "on", "for", "with", "and", "or", "is", "are", "be", "by",
    "from", "at", "as", "it", "its", "this", "that", "these", "my", "me", "i", "you", "your", "we",
    "our", "please", "can", "could", "would", "should", "what", "which", "do", "does", "how",
    "some", "all", "into", "about",
];

/// Words people use for one another when they ask for software to do something. Kept
/// general on purpose: a list fitted to one set of tools would not carry to the next.
const SYNONYMS: [&[&str]; 38] = [
    &["delete", "remove", "erase", "drop", "destroy", "trash"],
    &["create", "make", "add", "new", "file", "open", "start"],
    &[
        "find", "search", "look", "lookup", "query", "locate", "grep",
    ],
    &["list", "show", "enumerate", "browse", "which"],
    &[
        "get", "fetch", "read", "retrieve", "load", "view", "download", "see",
    ],
    &["send", "post", "deliver", "notify", "tell", "message"],
    &["update", "edit", "modify", "change", "patch", "set"],
    &["rename", "move"],
    &["write", "save", "store", "put", "upload"],
    &["run", "execute", "exec", "invoke", "launch"],
    &["stop", "halt", "kill", "cancel", "terminate"],
    &["reply", "respond", "comment", "answer"],
    &["react", "reaction", "emoji"],
    &["remember", "memory", "recall", "knowledge"],
    &["add", "sum", "plus", "total"],
    &["history", "log", "recent"],
    &["file", "document", "doc"],
    &["directory", "folder", "dir"],
    &["repository", "repo", "project"],
    &["issue", "ticket", "bug", "task"],
    &["pull", "merge", "pr"],
    &["email", "mail", "inbox"],
    &["message", "chat", "dm"],
    &["channel", "room", "chat"],
    &["event", "meeting", "appointment", "calendar", "schedule"],
    &["time", "clock", "now", "current"],
    &["date", "day", "today", "tomorrow", "yesterday", "week"],
    &["image", "picture", "photo", "screenshot"],
    &["payment", "pay", "charge", "invoice"],
    &["refund", "reimburse"],
    &["customer", "client", "user", "account"],
    &["database", "db", "sql", "table"],
    &["container", "pod"],
    &["cluster", "kubernetes", "k8s"],
    &["bucket", "storage", "object", "blob"],
    &["url", "web", "page", "website", "link"],
    &["commit", "change"],
    &["text", "content", "contents"],
];

/// What a tool does, as the first verb of its name says (`create_issue`, `list_events`),
/// and the words by which people ask for it, questions included ("what's in the
/// bucket" asks for a list). A tool whose action is the query's gets [`ACTION`] more.
const ACTIONS: [(&str, &[&str]); 10] = [
    (
        "create",
        &[
            "create", "make", "add", "new", "open", "start", "schedule", "remember", "book",
            "draft", "file",
        ],
    ),
    (
        "list",
        &["list", "show", "which", "what", "browse", "enumerate"],
    ),
    (
        "get",
        &[
            "get", "read", "fetch", "retrieve", "view", "download", "see", "what", "show",
        ],
    ),
    (
        "search",
        &[
            "search", "find", "look", "lookup", "locate", "grep", "where", "query",
        ],
    ),
    (
        "update",
        &[
            "update",
            "edit",
            "modify",
            "change",
            "set",
            "patch",
            "transition",
        ],
    ),
    (
        "delete",
        &["delete", "remove", "erase", "drop", "cancel", "destroy"],
    ),
    (
        "send",
        &["send", "post", "tell", "notify", "email", "message"],
    ),
    ("comment", &["comment", "reply", "respond", "answer"]),
    ("move", &["move", "rename"]),
    ("run", &["run", "execute", "apply", "invoke"]),
];
/// How much more a tool scores whose action is the query's.
const ACTION: f32 = 1.3;

/// The actions a word asks for.
fn actions_of(word: &str) -> impl Iterator<Item = &'static str> + '_ {
    ACTIONS
        .iter()
        .filter(move |(_, words)| words.contains(&word))
        .map(|(action, _)| *action)
}

/// A tool found for a query, and how well it fits.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Found {
    /// `server__tool`.
    pub name: String,
    /// BM25's score: only the order among one query's results means anything.
    pub score: f32,
}

/// Tools, indexed for [`ToolIndex::search`].
pub struct ToolIndex {
    names: Vec<String>,
    /// Each tool's action: the first word of its name that is one ([`ACTIONS`]).
    actions: Vec<Option<&'static str>>,
    /// For each term, the tools that have it and its weighted frequency there.
    postings: HashMap<String, Vec<(u32, f32)>>,
    /// Each tool's weighted length, and the average.
    lengths: Vec<f32>,
    average: f32,
    stemmer: Stemmer,
}

impl std::fmt::Debug for ToolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolIndex")
            .field("tools", &self.names.len())
            .field("terms", &self.postings.len())
            .finish_non_exhaustive()
    }
}

impl ToolIndex {
    /// Indexes `tools`: each its name as it is to be found (`server__tool`), its
    /// server's name, and its definition.
    pub fn new<'a>(tools: impl IntoIterator<Item = (&'a str, &'a str, &'a Tool)>) -> ToolIndex {
        let stemmer = Stemmer::create(Algorithm::English);
        let mut names = Vec::new();
        let mut actions = Vec::new();
        let mut postings: HashMap<String, Vec<(u32, f32)>> = HashMap::new();
        let mut lengths = Vec::new();
        for (id, (name, server, tool)) in tools.into_iter().enumerate() {
            let mut counts: HashMap<String, f32> = HashMap::new();
            let mut length = 0.0;
            let mut add = |text: &str, weight: f32| {
                for term in terms(text, &stemmer) {
                    *counts.entry(term).or_default() += weight;
                    length += weight;
                }
            };
            add(&tool.name, NAME);
            add(tool.title.as_deref().unwrap_or_default(), TITLE);
            add(server, SERVER);
            add(tool.description.as_deref().unwrap_or_default(), DESCRIPTION);
            if let Some(Value::Object(properties)) = tool.input_schema.get("properties") {
                for (parameter, schema) in properties {
                    add(parameter, PARAMETER);
                    if let Some(text) = schema.get("description").and_then(Value::as_str) {
                        add(text, PARAMETER_DESCRIPTION);
                    }
                }
            }
            for (term, count) in counts {
                postings.entry(term).or_default().push((id as u32, count));
            }
            names.push(name.to_owned());
            lengths.push(length);
            actions.push(
                raw_words(&tool.name)
                    .iter()
                    .find_map(|w| actions_of(w).next()),
            );
        }
        let average = if lengths.is_empty() {
            1.0
        } else {
            (lengths.iter().sum::<f32>() / lengths.len() as f32).max(1.0)
        };
        ToolIndex {
            names,
            actions,
            postings,
            lengths,
            average,
            stemmer,
        }
    }

    /// How many tools it holds.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The `limit` tools that fit `query` best, best first; none when no word of the
    /// query (or its synonyms) appears in any tool.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Found> {
        let mut weights: HashMap<String, f32> = HashMap::new();
        for word in words(query) {
            let stem = self.stemmer.stem(&word).into_owned();
            let weight = weights.entry(stem).or_default();
            *weight = weight.max(1.0);
            for group in SYNONYMS.iter().filter(|g| g.contains(&word.as_str())) {
                for synonym in group.iter().filter(|s| **s != word) {
                    let stem = self.stemmer.stem(synonym).into_owned();
                    let weight = weights.entry(stem).or_default();
                    *weight = weight.max(SYNONYM);
                }
            }
        }
        let total = self.names.len() as f32;
        let mut scores = vec![0.0f32; self.names.len()];
        for (term, weight) in &weights {
            let Some(postings) = self.postings.get(term) else {
                continue;
            };
            let df = postings.len() as f32;
            let idf = (1.0 + (total - df + 0.5) / (df + 0.5)).ln();
            for &(id, tf) in postings {
                let length = self.lengths[id as usize] / self.average;
                let saturated = tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * length));
                scores[id as usize] += weight * idf * saturated;
            }
        }
        // The first word of the query that asks for an action says which ("what" may
        // ask for a list or for one thing).
        let asked: Vec<&str> = raw_words(query)
            .iter()
            .find_map(|w| {
                let actions: Vec<&str> = actions_of(w).collect();
                (!actions.is_empty()).then_some(actions)
            })
            .unwrap_or_default();
        for (score, action) in scores.iter_mut().zip(&self.actions) {
            if action.is_some_and(|a| asked.contains(&a)) {
                *score *= ACTION;
            }
        }
        let mut found: Vec<(usize, f32)> = scores
            .into_iter()
            .enumerate()
            .filter(|(_, score)| *score > 0.0)
            .collect();
        found.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        found.truncate(limit);
        found
            .into_iter()
            .map(|(id, score)| Found {
                name: self.names[id].clone(),
                score,
            })
            .collect()
    }
}

/// The stemmed words of `text` that are not stopwords.
fn terms(text: &str, stemmer: &Stemmer) -> Vec<String> {
    words(text)
        .into_iter()
        .map(|word| stemmer.stem(&word).into_owned())
        .collect()
}

/// [`raw_words`] without stopwords and stray letters.
fn words(text: &str) -> Vec<String> {
    raw_words(text)
        .into_iter()
        // One Latin letter is what is left of "what's" or "don't".
        .filter(|word| {
            let stray = word.len() == 1 && word.is_ascii();
            !stray && !STOPWORDS.contains(&word.as_str())
        })
        .collect()
}

/// `text` split into lower-case words: at anything but letters and digits, between a
/// lower-case letter and an upper-case one (`createIssue`), and around each CJK
/// character (written without spaces).
fn raw_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    let flush = |current: &mut String, words: &mut Vec<String>| {
        if !current.is_empty() {
            words.push(std::mem::take(current));
        }
    };
    for c in text.chars() {
        if is_cjk(c) {
            flush(&mut current, &mut words);
            words.push(c.to_string());
            previous_lower = false;
        } else if c.is_alphanumeric() {
            if c.is_uppercase() && previous_lower {
                flush(&mut current, &mut words);
            }
            previous_lower = c.is_lowercase() || c.is_ascii_digit();
            current.extend(c.to_lowercase());
        } else {
            flush(&mut current, &mut words);
            previous_lower = false;
        }
    }
    flush(&mut current, &mut words);
    words
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_names_the_way_people_write_them() {
        assert_eq!(words("create_pullRequest"), ["create", "pull", "request"]);
        assert_eq!(
            words("get-file-contents v2"),
            ["get", "file", "contents", "v2"]
        );
        assert_eq!(
            words("Read the README of a repo"),
            ["read", "readme", "repo"]
        );
        assert_eq!(words("读取文件"), ["读", "取", "文", "件"]);
    }

    #[test]
    fn a_query_with_no_known_word_finds_nothing() {
        let now = Tool::new("now", "The current time.", serde_json::Map::new());
        let index = ToolIndex::new([("time__now", "time", &now)]);
        assert!(index.search("zebra", 5).is_empty());
        assert_eq!(index.search("what time is it", 5)[0].name, "time__now");
        assert!(index.search("the of a", 5).is_empty());
    }
}
