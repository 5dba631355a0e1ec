//! Tool search: MCP tools ranked for a task said in words, offline, with no model:
//! BM25 over each tool's name split into words, its title, description, parameter
//! names and descriptions, and its server's name, the words stemmed (Snowball's English
//! stemmer). Each word of the query is a concept, met by itself or by one of the words
//! people use for it (its lexicon: delete and remove, ticket and issue, and phrases
//! such as "get rid of" or "money back"); a tool scores by the concepts it meets, the
//! share of them, and the share it meets in its name, never by its server's name
//! alone. Values count by their kind (`config.yaml` is a file, `OPS-12` an issue,
//! `#general` a channel, `4f2a9c1` a commit, `$20` an amount, Singapore a time zone;
//! quoted text and what is to be told, "that the deploy is done", are left out), names
//! in the middle of a sentence count half, a thing named ("the api pod") goes to a tool
//! that takes one, a server named ("on GitHub") is where to look, a tool whose action is
//! the one asked for (`create_`, `list_`; "which branches" asks for a list, "have I
//! got..." to read) scores more and one with another action less, and a deprecated one
//! less.
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

mod lexicon;
mod places;
mod reading;

use lexicon::{Lexicon, with_phrases_read};
use reading::{actions_asked, has_clock_time, is_plural, kinds_named, proper_names, states_read};
use rmcp::model::Tool;
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
const DESCRIPTION_REST: f32 = 0.5;
const PARAMETER: f32 = 1.5;
const PARAMETER_DESCRIPTION: f32 = 0.5;
/// How much a synonym of a query's word counts, against the word itself.
const SYNONYM: f32 = 0.6;
/// How much a proper name of the query counts (see [`proper_names`]).
const PROPER_NAME: f32 = 0.5;
/// How much more a tool scores that meets all of a query's words in its name or title
/// (in proportion: half as much for half of them): a tool is named for what it does.
const NAMED: f32 = 1.0;
/// How much the share of a query's words a tool meets weighs on its score.
const COVERAGE: f32 = 1.0;

/// How much more a tool scores whose action is the query's (and less, one that
/// changes things when the query asks a question).
const ACTION: f32 = 1.5;
/// How much more a tool scores whose server the query names ("on GitHub", "in the
/// docs"): the person said where to look, which weighs more than a word of what to do.
const WHERE: f32 = 3.0;
/// How much more a tool scores that takes a thing the query names ("the api pod").
const ARGUMENT: f32 = 1.5;
/// Words that introduce a thing named.
const DETERMINERS: &[&str] = &["the", "this", "that", "my", "our", "its", "their", "your"];
/// What a tool that says it is deprecated keeps of its score: its replacement comes
/// first.
const DEPRECATED: f32 = 0.5;

/// A tool found for a query, and how well it fits.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Found {
    /// `server__tool`.
    pub name: String,
    /// BM25's score: only the order among one query's results means anything.
    pub score: f32,
}

/// What one tool met of one concept of a query.
#[derive(Debug, Clone, Copy, Default)]
struct Met {
    seen: bool,
    /// The best score of the concept's words in the tool.
    gained: f32,
    /// How closely it was met in the tool's own words (not only its server's name):
    /// 1 by the word itself, [`SYNONYM`] by a synonym only, 0 not at all.
    own: f32,
    /// How closely it was met in the tool's name or title, likewise.
    named: f32,
}

/// A term in one tool.
#[derive(Debug, Clone, Copy)]
struct Posting {
    tool: u32,
    frequency: f32,
    /// Found in the tool's own words, not only in its server's name: a server's name
    /// says where a tool is, not what it does, so it never finds a tool by itself.
    own: bool,
    /// Found in the tool's name or title.
    named: bool,
}

/// Tools, indexed for [`ToolIndex::search`].
pub struct ToolIndex {
    names: Vec<String>,
    /// Each tool's action (`lexicon::ACTIONS`): a word of its name that names one, else
    /// the first word of its name that asks for one, else its description's first word.
    actions: Vec<Option<&'static str>>,
    /// Whether each tool's description says it is deprecated.
    deprecated: Vec<bool>,
    /// The terms of the servers' names.
    servers: std::collections::HashSet<String>,
    /// The terms of each tool's server's name.
    server_terms: Vec<Vec<String>>,
    /// The terms of each tool's name, and of its parameters' names.
    name_terms: Vec<Vec<String>>,
    parameter_terms: Vec<Vec<String>>,
    /// The terms of every tool's parameters' names: the kinds of things tools take.
    parameter_kinds: std::collections::HashSet<String>,
    /// For each term, the tools that have it, its weighted frequency there, and
    /// whether it is there other than in the server's name.
    postings: HashMap<String, Vec<Posting>>,
    /// Each tool's weighted length, and the average.
    lengths: Vec<f32>,
    average: f32,
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
        let lexicon = Lexicon::get();
        let mut names = Vec::new();
        let mut actions = Vec::new();
        let mut deprecated = Vec::new();
        let mut server_terms = Vec::new();
        let mut name_terms = Vec::new();
        let mut parameter_terms = Vec::new();
        let mut postings: HashMap<String, Vec<Posting>> = HashMap::new();
        let mut lengths = Vec::new();
        for (id, (name, server, tool)) in tools.into_iter().enumerate() {
            let mut counts: HashMap<String, (f32, bool, bool)> = HashMap::new();
            let mut length = 0.0;
            let mut add = |text: &str, weight: f32, own: bool, named: bool| {
                for term in terms(text, lexicon) {
                    let count = counts.entry(term).or_default();
                    count.0 += weight;
                    count.1 |= own;
                    count.2 |= named;
                    length += weight;
                }
            };
            add(&tool.name, NAME, true, true);
            add(tool.title.as_deref().unwrap_or_default(), TITLE, true, true);
            add(server, SERVER, false, false);
            server_terms.push(terms(server, lexicon));
            // Its first sentence says what it does; the rest, how, with incidental words.
            let description = tool.description.as_deref().unwrap_or_default();
            let first_end = description
                .find(". ")
                .or_else(|| description.find('\n'))
                .map_or(description.len(), |i| i + 1);
            add(&description[..first_end], DESCRIPTION, true, false);
            add(&description[first_end..], DESCRIPTION_REST, true, false);
            name_terms.push(terms(&tool.name, lexicon));
            let mut parameters = Vec::new();
            if let Some(Value::Object(properties)) = tool.input_schema.get("properties") {
                for (parameter, schema) in properties {
                    parameters.extend(terms(parameter, lexicon));
                    add(parameter, PARAMETER, true, false);
                    if let Some(text) = schema.get("description").and_then(Value::as_str) {
                        add(text, PARAMETER_DESCRIPTION, true, false);
                    }
                }
            }
            parameter_terms.push(parameters);
            for (term, (frequency, own, named)) in counts {
                postings.entry(term).or_default().push(Posting {
                    tool: id as u32,
                    frequency,
                    own,
                    named,
                });
            }
            names.push(name.to_owned());
            lengths.push(length);
            deprecated.push(
                description
                    .as_bytes()
                    .windows(10)
                    .any(|w| w.eq_ignore_ascii_case(b"deprecated")),
            );
            // The action its name says (`create_issue`), else the first word of its
            // description ("List Git branches", "Shows the commit logs").
            let described = description
                .split(|c: char| !c.is_alphanumeric())
                .find(|w| !w.is_empty())
                .map(str::to_lowercase)
                .and_then(|first| lexicon.actions_of(&first).first().copied());
            // A word of the name that is an action's own name says it best:
            // `add_issue_comment` comments, though "add" creates.
            let named = raw_words(&tool.name);
            actions.push(
                named
                    .iter()
                    .find_map(|w| lexicon::is_action(w))
                    .or_else(|| {
                        named
                            .iter()
                            .find_map(|w| lexicon.actions_of(w).first().copied())
                    })
                    .or(described),
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
            deprecated,
            servers: server_terms.iter().flatten().cloned().collect(),
            server_terms,
            name_terms,
            parameter_kinds: parameter_terms.iter().flatten().cloned().collect(),
            parameter_terms,
            postings,
            lengths,
            average,
        }
    }

    /// The things `query` names by a name the tools do not know followed by their
    /// kind ("the api pod", "the backups bucket", "our invoices table"), as stems of the
    /// kinds that some tool takes as a parameter; and the query without those names,
    /// which are values to pass on.
    fn instances_named(&self, query: &str) -> (Vec<String>, String) {
        let lexicon = Lexicon::get();
        let words = raw_words(query);
        let known = |word: &str| self.postings.contains_key(lexicon.stem(word).as_ref());
        let (mut kinds, mut rest) = (Vec::new(), String::new());
        let mut i = 0;
        while i < words.len() {
            let word = &words[i];
            rest.push_str(word);
            rest.push(' ');
            i += 1;
            if !DETERMINERS.contains(&word.as_str()) || i + 1 >= words.len() {
                continue;
            }
            let (name, kind) = (&words[i], &words[i + 1]);
            let kind_stem = lexicon.stem(kind).into_owned();
            // One thing named: "the staging pods" are to be listed.
            if !known(name)
                && !lexicon.is_stopword(name)
                && !is_plural(kind)
                && self.parameter_kinds.contains(&kind_stem)
            {
                kinds.push(kind_stem);
                rest.push_str(kind);
                rest.push(' ');
                i += 2;
            }
        }
        (kinds, rest)
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
        // Each word of the query is a concept, found by itself or by its synonyms. A
        // name in the middle of the sentence (Alice, Sydney, Acme) is what a tool is to
        // work on rather than what it does: it counts half, unless it names a server.
        let names = proper_names(query);
        let lexicon = Lexicon::get();
        let mut concepts: Vec<(f32, HashMap<String, f32>)> = Vec::new();
        let add_concept = |word: &str, concepts: &mut Vec<(f32, HashMap<String, f32>)>| {
            let stem = lexicon.stem(word).into_owned();
            if concepts.iter().any(|(_, c)| c.get(&stem) == Some(&1.0)) {
                return;
            }
            let weight = if names.iter().any(|n| n == word) && !self.servers.contains(&stem) {
                PROPER_NAME
            } else {
                1.0
            };
            let mut concept: HashMap<String, f32> = lexicon
                .synonyms(&stem)
                .iter()
                .map(|synonym| (synonym.clone(), SYNONYM))
                .collect();
            concept.insert(stem, 1.0);
            concepts.push((weight, concept));
        };
        // A file's name, an address, a place, a number are values the tool is to be
        // given: their kind is what the query asks about, not the words inside them
        // (`config.yaml` is a file, not YAML).
        let (places, rest) = places::named(query);
        let (mut kinds, rest) = kinds_named(&rest);
        if places > 0 {
            kinds.push("timezone");
        }
        // A time of day and two places ("9am in London, what time in Lima") ask for a
        // conversion; two places alone may ask for the time in each.
        if places > 1 && has_clock_time(query) {
            kinds.push("convert");
        }
        // Phrases are read as the word they stand for ("get rid of" is delete).
        let rest = states_read(&with_phrases_read(&rest));
        // "The api pod": a thing named, which a tool takes as an argument.
        let (arguments, rest) = self.instances_named(&rest);
        for word in words(&rest) {
            add_concept(&word, &mut concepts);
        }
        for kind in &kinds {
            add_concept(kind, &mut concepts);
        }
        let total = self.names.len() as f32;
        let mut scores = vec![0.0f32; self.names.len()];
        let mut covered = vec![0.0f32; self.names.len()];
        let mut in_name = vec![0.0f32; self.names.len()];
        let mut known = 0.0f32;
        // What each tool met of the concept at hand, and which tools met it.
        let mut met = vec![Met::default(); self.names.len()];
        let mut touched = Vec::new();
        for (importance, concept) in &concepts {
            // A concept counts once per tool: through its best-scoring word (a tool
            // that has both "document" and "doc" met "file" once).
            let mut anywhere = false;
            for (term, weight) in concept {
                let Some(postings) = self.postings.get(term) else {
                    continue;
                };
                anywhere = true;
                let df = postings.len() as f32;
                let idf = (1.0 + (total - df + 0.5) / (df + 0.5)).ln();
                for posting in postings {
                    let id = posting.tool as usize;
                    let length = self.lengths[id] / self.average;
                    let tf = posting.frequency;
                    let saturated = tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * length));
                    if !met[id].seen {
                        met[id].seen = true;
                        touched.push(id);
                    }
                    met[id].gained = met[id].gained.max(importance * weight * idf * saturated);
                    if posting.own {
                        met[id].own = met[id].own.max(*weight);
                    }
                    if posting.named {
                        met[id].named = met[id].named.max(*weight);
                    }
                }
            }
            if anywhere {
                known += importance;
            }
            for id in touched.drain(..) {
                let Met {
                    gained, own, named, ..
                } = std::mem::take(&mut met[id]);
                in_name[id] += importance * named;
                scores[id] += gained;
                covered[id] += importance * own;
            }
        }
        // A tool that meets more of what was asked comes first: two words met weakly
        // say more than one met strongly. Words no tool has do not count.
        for ((score, covered), in_name) in scores.iter_mut().zip(&covered).zip(&in_name) {
            if *covered == 0.0 {
                *score = 0.0;
            } else {
                *score *= (*covered / known.max(1.0)).powf(COVERAGE);
                *score *= 1.0 + NAMED * in_name / known.max(1.0);
            }
        }
        // The first word of the query that asks for an action says which.
        let opens_to_read = kinds.iter().any(|k| matches!(*k, "file" | "image" | "url"));
        let query_words = raw_words(&rest);
        let asked = actions_asked(&query_words, opens_to_read);
        let reading = |a: &str| matches!(a, "list" | "get" | "search");
        let asks_to_read = !asked.is_empty() && asked.iter().all(|a| reading(a));
        // A server the query names ("on GitHub", "in the docs") is where to look.
        let named_servers: Vec<&String> = concepts
            .iter()
            .flat_map(|(_, concept)| concept.iter().filter(|(_, w)| **w == 1.0).map(|(t, _)| t))
            .filter(|term| self.servers.contains(*term))
            .collect();
        // One pass over the tools for what agrees with the query beyond its words.
        for (id, score) in scores.iter_mut().enumerate() {
            match self.actions[id] {
                Some(a) if asked.contains(&a) => *score *= ACTION,
                // Another action ranks lower: a question ("which branches...") asks to
                // read, not to change, and a change asked for ("make a folder") is not
                // a reading nor another change. Readings of one kind or another pass.
                Some(a) if !asked.is_empty() && (!asks_to_read || !reading(a)) => *score /= ACTION,
                _ => {}
            }
            // A thing named ("the api pod") is given to a tool that takes one, not listed.
            if arguments
                .iter()
                .any(|a| self.parameter_terms[id].contains(a))
            {
                *score *= ARGUMENT;
            } else if self.actions[id] == Some("list")
                && arguments.iter().any(|a| self.name_terms[id].contains(a))
            {
                *score /= ARGUMENT;
            }
            if self.server_terms[id]
                .iter()
                .any(|t| named_servers.contains(&t))
            {
                *score *= WHERE;
            }
            if self.deprecated[id] {
                *score *= DEPRECATED;
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
fn terms(text: &str, lexicon: &Lexicon) -> Vec<String> {
    words(text)
        .into_iter()
        .map(|word| lexicon.stem(&word).into_owned())
        .collect()
}

/// [`raw_words`] without stopwords and stray letters.
fn words(text: &str) -> Vec<String> {
    raw_words(text)
        .into_iter()
        // One Latin letter is what is left of "what's" or "don't".
        .filter(|word| {
            let stray = word.len() == 1 && word.is_ascii();
            !stray && !Lexicon::get().is_stopword(word)
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
    fn a_server_name_alone_finds_nothing_and_deprecated_tools_come_second() {
        let tool = |name: &str, description: &str| {
            Tool::new(
                name.to_owned(),
                description.to_owned(),
                serde_json::Map::new(),
            )
        };
        let (echo, old, new) = (
            tool("echo", "Echoes the input."),
            tool(
                "read_file",
                "Read a file as text. DEPRECATED: use read_text_file.",
            ),
            tool("read_text_file", "Read a file as text."),
        );
        let index = ToolIndex::new([
            ("everything__echo", "everything", &echo),
            ("fs__read_file", "fs", &old),
            ("fs__read_text_file", "fs", &new),
        ]);
        assert!(index.search("forget everything", 5).is_empty());
        assert_eq!(
            index.search("read notes.txt", 5)[0].name,
            "fs__read_text_file"
        );
    }

    #[test]
    fn a_thing_named_goes_to_the_tool_that_takes_it_and_a_server_named_is_where() {
        let tool = |name: &str, description: &str, parameters: &[&str]| {
            let properties: serde_json::Map<String, Value> = parameters
                .iter()
                .map(|p| ((*p).to_owned(), serde_json::json!({"type": "string"})))
                .collect();
            let schema = serde_json::json!({"type": "object", "properties": properties});
            let Value::Object(schema) = schema else {
                unreachable!()
            };
            Tool::new(name.to_owned(), description.to_owned(), schema)
        };
        let (pods, pod, issue, ticket) = (
            tool("list_pods", "List the pods of a namespace.", &["namespace"]),
            tool("get_pod", "Get a pod's status and events.", &["pod"]),
            tool("create_issue", "Create an issue.", &["title"]),
            tool(
                "create_jira_issue",
                "Create a Jira issue: a bug or a task.",
                &["summary"],
            ),
        );
        let index = ToolIndex::new([
            ("k8s__list_pods", "k8s", &pods),
            ("k8s__get_pod", "k8s", &pod),
            ("github__create_issue", "github", &issue),
            ("jira__create_jira_issue", "jira", &ticket),
        ]);
        // "frontend" is no word of any tool: the name of a pod, a value given to the
        // tool that takes a pod.
        let (arguments, rest) = index.instances_named("show the frontend pod's events");
        assert_eq!(arguments, ["pod"]);
        assert_eq!(rest.trim(), "show the pod s events");
        // Pods in the plural are listed; "status" is a word of the tools, not a name.
        assert!(index.instances_named("the frontend pods").0.is_empty());
        assert!(index.instances_named("the status pod").0.is_empty());
        assert_eq!(
            index.search("report a bug", 5)[0].name,
            "jira__create_jira_issue"
        );
        assert_eq!(
            index.search("report a bug on GitHub", 5)[0].name,
            "github__create_issue"
        );
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
