//! The words of software as people say them: which words stand for one another
//! (delete and remove, ticket and issue), which phrases stand for a word ("get rid
//! of" is delete, "money back" a refund), and which words ask for which action.
//!
//! Written by domain, from how people ask for file, version control, web, memory,
//! time, code hosting, chat, calendar, ticket, database, cluster, storage, payment
//! and mail tools in general, not from any one set of tools or tasks: a list fitted
//! to one set would not carry to the next.

use std::collections::HashMap;
use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};

/// Words that say nothing of what a tool does.
pub(crate) const STOPWORDS: &[&str] = &[
    "a",
    "an",
    "the",
    "of",
    "to",
    "in",
    "on",
    "for",
    "with",
    "and",
    "or",
    "is",
    "are",
    "be",
    "by",
    "from",
    "at",
    "as",
    "it",
    "its",
    "this",
    "that",
    "these",
    "my",
    "me",
    "i",
    "you",
    "your",
    "we",
    "our",
    "please",
    "can",
    "could",
    "would",
    "should",
    "what",
    "which",
    "do",
    "does",
    "how",
    "some",
    "all",
    "into",
    "about",
    "any",
    "just",
    "there",
    "here",
    "want",
    "need",
    "let",
    "us",
    "already",
    "yet",
    "still",
    "also",
    "really",
    "actually",
    "anything",
    "something",
    "anyone",
    "someone",
    "anywhere",
    "somewhere",
    "very",
    "too",
    "so",
    "then",
    "than",
    "but",
    "if",
    "was",
    "were",
    "been",
    "being",
    "have",
    "has",
    "had",
    "got",
    "will",
    "shall",
    "may",
    "might",
    "must",
    "again",
    "only",
    "own",
    "such",
    "each",
    "other",
    "them",
    "they",
    "their",
    "he",
    "she",
    "him",
    "her",
    "his",
    "who",
    "whom",
    "whose",
    "why",
    "when",
    "go",
    "over",
    "s",
    "m",
    "t",
    "re",
    "ve",
    "ll",
    "d",
];

/// Phrases that stand for a word, read before the query is split into words: what
/// they ask for is not in any of their words ("money back" is not about money).
pub(crate) const PHRASES: &[(&str, &str)] = &[
    ("money back", "refund"),
    ("get rid of", "delete"),
    ("throw away", "delete"),
    ("clean up", "delete"),
    ("can go", "delete"),
    ("look through", "search"),
    ("look for", "search"),
    ("search for", "search"),
    ("hunt for", "search"),
    ("dig up", "search"),
    ("look up", "search"),
    ("look at", "view"),
    ("take a look", "view"),
    ("pull up", "open"),
    ("bring up", "open"),
    ("catch me up", "history"),
    ("catch up", "history"),
    ("write down", "remember"),
    ("jot down", "remember"),
    ("note down", "remember"),
    ("keep in mind", "remember"),
    ("make a note", "remember"),
    ("step by step", "sequential thinking"),
    ("one step at a time", "sequential thinking"),
    ("think through", "sequential thinking"),
    ("think it through", "sequential thinking"),
    ("think it out", "sequential thinking"),
    ("sign up", "create"),
    ("set up", "create"),
    ("spin up", "create"),
    ("switch to", "checkout"),
    ("check out", "checkout"),
    ("branch off", "create branch"),
    ("fork off", "create branch"),
    ("prs", "pull requests"),
    ("pr", "pull request"),
    ("thumbs up", "reaction"),
    ("thumbs-up", "reaction"),
    ("who changed", "log"),
    ("who touched", "log"),
    ("how many", "count"),
    ("send back", "reply"),
    ("call off", "cancel"),
];

/// Words that stand for one another. A word may be in several groups (a "file" is a
/// document, and to file is to create).
pub(crate) const SYNONYMS: &[&[&str]] = &[
    // What is done.
    &[
        "delete", "remove", "erase", "drop", "destroy", "trash", "forget", "purge", "wipe",
        "discard", "rm", "scrap", "cancel",
    ],
    &[
        "create", "make", "add", "new", "file", "open", "start", "raise", "register", "generate",
        "init", "mkdir", "touch",
    ],
    &[
        "find", "search", "look", "lookup", "query", "locate", "grep", "hunt", "seek", "where",
        "filter", "match",
    ],
    &[
        "list",
        "show",
        "enumerate",
        "browse",
        "which",
        "ls",
        "overview",
        "every",
        "exist",
    ],
    &[
        "get", "fetch", "read", "retrieve", "load", "view", "download", "see", "grab", "cat",
        "print", "display", "open", "inspect", "peek", "dump", "say",
    ],
    &[
        "send",
        "post",
        "deliver",
        "notify",
        "tell",
        "message",
        "ping",
        "announce",
        "broadcast",
        "inform",
        "share",
    ],
    &[
        "update", "edit", "modify", "change", "patch", "set", "alter", "tweak", "adjust", "fix",
        "correct", "replace", "amend", "turn",
    ],
    &["rename", "move", "relocate", "mv", "transfer"],
    &[
        "write", "save", "store", "put", "upload", "persist", "record", "jot",
    ],
    &["copy", "duplicate", "clone", "cp"],
    &[
        "run", "execute", "exec", "invoke", "launch", "apply", "trigger", "perform",
    ],
    &["stop", "halt", "kill", "cancel", "terminate", "abort"],
    &["reply", "respond", "comment", "answer"],
    &[
        "react", "reaction", "emoji", "thumbs", "like", "upvote", "emoticon",
    ],
    &[
        "remember",
        "memory",
        "recall",
        "knowledge",
        "know",
        "fact",
        "memorize",
        "memorise",
        "note",
        "observation",
    ],
    &["add", "sum", "plus", "total", "combine"],
    &["history", "log", "recent", "latest", "timeline"],
    &["count", "tally", "total"],
    &["check", "verify", "test", "healthy", "health"],
    // Files and folders.
    &["file", "document", "doc"],
    &["directory", "folder", "dir", "path"],
    &[
        "tree",
        "hierarchy",
        "structure",
        "nested",
        "recursive",
        "layout",
    ],
    &[
        "size", "large", "big", "space", "byte", "bytes", "heavy", "huge",
    ],
    &[
        "info",
        "metadata",
        "detail",
        "details",
        "attribute",
        "permission",
        "modified",
        "created",
        "timestamp",
        "stat",
    ],
    &[
        "text", "content", "contents", "inside", "body", "say", "says",
    ],
    &[
        "image",
        "picture",
        "photo",
        "screenshot",
        "pic",
        "diagram",
        "logo",
        "icon",
        "media",
    ],
    &["audio", "sound", "recording", "voice"],
    &["multiple", "several", "both", "many", "batch"],
    &["allowed", "permitted", "accessible", "access"],
    // Version control.
    &["repository", "repo", "project", "codebase"],
    &["commit", "revision", "sha", "changeset"],
    &["stage", "staged", "index", "cached"],
    &[
        "unstaged",
        "uncommitted",
        "working",
        "dirty",
        "pending",
        "modified",
    ],
    &["unstage", "reset", "undo", "revert", "rollback"],
    &["branch", "checkout", "switch"],
    &["status", "state"],
    &["diff", "difference", "compare", "changes", "delta"],
    &[
        "code",
        "source",
        "definition",
        "defined",
        "defines",
        "function",
        "symbol",
    ],
    &["pull", "merge", "pr", "ship", "land"],
    &["review", "approve", "approval"],
    // Knowledge, reasoning, time, the web.
    &["entity", "person", "people", "company", "thing", "node"],
    &[
        "relation",
        "relationship",
        "link",
        "connect",
        "connection",
        "relate",
    ],
    &[
        "think",
        "thinking",
        "reason",
        "reasoning",
        "step",
        "steps",
        "thought",
        "thoughts",
        "plan",
        "sequential",
        "stage",
        "stages",
        "carefully",
    ],
    &[
        "time",
        "clock",
        "now",
        "current",
        "hour",
        "minute",
        "morning",
        "afternoon",
        "evening",
        "night",
        "midnight",
        "noon",
        "am",
        "pm",
        "late",
        "early",
        "date",
        "today",
    ],
    &[
        "date",
        "day",
        "today",
        "tomorrow",
        "yesterday",
        "week",
        "month",
    ],
    &["timezone", "zone", "convert", "conversion"],
    &[
        "url", "web", "page", "website", "link", "article", "site", "html", "internet",
    ],
    &["environment", "env", "variable", "variables"],
    &["sample", "example", "test", "demo"],
    &["small", "tiny", "little"],
    // Chat, mail, calendar, tickets.
    &["email", "mail", "inbox", "message"],
    &["message", "chat", "dm", "said"],
    &["channel", "room"],
    &["draft", "compose", "prepare", "unsent"],
    &["label", "tag", "category"],
    &["profile", "bio", "title", "role", "job"],
    &[
        "event",
        "meeting",
        "appointment",
        "calendar",
        "schedule",
        "sync",
        "agenda",
        "booking",
        "book",
    ],
    &["free", "available", "availability", "slot", "busy", "open"],
    &["issue", "ticket", "bug", "task", "story", "defect"],
    &["assign", "give", "hand", "owner", "assignee", "delegate"],
    &[
        "transition",
        "done",
        "resolved",
        "resolve",
        "close",
        "closed",
        "progress",
        "reopen",
        "mark",
    ],
    // Databases, clusters, storage, payments.
    &[
        "database", "db", "sql", "table", "postgres", "select", "row",
    ],
    &["schema", "column", "field", "structure", "type", "describe"],
    &["container", "pod", "workload"],
    &[
        "deployment",
        "replica",
        "replicas",
        "scale",
        "instance",
        "instances",
        "copies",
        "resize",
    ],
    &["node", "machine", "host", "worker"],
    &["cluster", "kubernetes", "k8s", "kubectl"],
    &[
        "log",
        "output",
        "stdout",
        "stderr",
        "crash",
        "crashing",
        "error",
        "restarting",
    ],
    &["manifest", "yaml", "spec", "config"],
    &["bucket", "storage", "object", "blob", "s3"],
    &[
        "payment",
        "pay",
        "charge",
        "invoice",
        "bill",
        "money",
        "cash",
        "transaction",
        "purchase",
    ],
    &["refund", "reimburse", "return"],
    &["balance", "funds", "cash", "money"],
    &[
        "customer",
        "client",
        "user",
        "account",
        "buyer",
        "subscriber",
    ],
];

/// What a tool does, as the first verb of its name says (`create_issue`, `list_events`),
/// and the words by which people ask for it, questions included ("what's in the
/// bucket" asks for a list).
pub(crate) const ACTIONS: &[(&str, &[&str])] = &[
    (
        "create",
        &[
            "create", "make", "add", "new", "open", "start", "schedule", "remember", "book",
            "draft", "file", "put", "raise", "register", "mkdir", "generate", "touch",
        ],
    ),
    (
        "list",
        &["list", "show", "which", "what", "browse", "enumerate", "ls"],
    ),
    (
        "get",
        &[
            "get", "read", "fetch", "retrieve", "view", "download", "see", "what", "show", "cat",
            "print", "display", "inspect", "dump",
        ],
    ),
    (
        "search",
        &[
            "search", "find", "look", "lookup", "locate", "grep", "where", "query", "hunt", "seek",
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
            "fix",
            "replace",
            "alter",
            "tweak",
            "adjust",
            "correct",
            "mark",
        ],
    ),
    (
        "delete",
        &[
            "delete", "remove", "erase", "drop", "cancel", "destroy", "forget", "purge", "wipe",
            "discard", "rm",
        ],
    ),
    (
        "send",
        &[
            "send", "post", "tell", "notify", "email", "message", "ping", "announce", "inform",
        ],
    ),
    (
        "write",
        &["write", "save", "store", "put", "upload", "record", "jot"],
    ),
    ("comment", &["comment", "reply", "respond", "answer"]),
    ("move", &["move", "rename", "relocate", "mv"]),
    ("run", &["run", "execute", "apply", "invoke", "trigger"]),
];

/// The synonyms of each word, by stem: built once.
pub(crate) struct Lexicon {
    /// For each stem, the stems that stand for it (itself excluded).
    synonyms: HashMap<String, Vec<String>>,
}

impl Lexicon {
    /// The lexicon, stemmed with `stemmer` (the English one, as the index's).
    pub(crate) fn get() -> &'static Lexicon {
        static LEXICON: OnceLock<Lexicon> = OnceLock::new();
        LEXICON.get_or_init(|| {
            let stemmer = Stemmer::create(Algorithm::English);
            let mut synonyms: HashMap<String, Vec<String>> = HashMap::new();
            for group in SYNONYMS {
                let stems: Vec<String> = group
                    .iter()
                    .map(|word| stemmer.stem(word).into_owned())
                    .collect();
                for stem in &stems {
                    let entry = synonyms.entry(stem.clone()).or_default();
                    for other in stems.iter().filter(|other| *other != stem) {
                        if !entry.contains(other) {
                            entry.push(other.clone());
                        }
                    }
                }
            }
            Lexicon { synonyms }
        })
    }

    /// The stems that stand for `stem`.
    pub(crate) fn synonyms(&self, stem: &str) -> &[String] {
        self.synonyms.get(stem).map_or(&[], Vec::as_slice)
    }
}

/// `query` lower-cased with each phrase of [`PHRASES`] replaced by its word, where
/// the phrase stands as whole words.
pub(crate) fn with_phrases_read(query: &str) -> String {
    let mut text = format!(" {} ", query.to_lowercase());
    for (phrase, word) in PHRASES {
        let mut from = 0;
        while let Some(at) = text[from..].find(phrase).map(|at| at + from) {
            let end = at + phrase.len();
            let bounded = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
            if bounded(text[..at].chars().next_back()) && bounded(text[end..].chars().next()) {
                text.replace_range(at..end, word);
                from = at + word.len();
            } else {
                from = end;
            }
        }
    }
    text
}

/// The actions a word asks for.
pub(crate) fn actions_of(word: &str) -> impl Iterator<Item = &'static str> + '_ {
    ACTIONS
        .iter()
        .filter(move |(_, words)| words.contains(&word))
        .map(|(action, _)| *action)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_are_read_as_whole_words() {
        assert_eq!(
            with_phrases_read("Get rid of old.zip, then look through the inbox").trim(),
            "delete old.zip, then search the inbox"
        );
        // Not inside other words.
        assert_eq!(
            with_phrases_read("the outlook format").trim(),
            "the outlook format"
        );
    }

    #[test]
    fn synonyms_are_found_by_stem_both_ways() {
        let lexicon = Lexicon::get();
        let stemmer = Stemmer::create(Algorithm::English);
        let stem = |w: &str| stemmer.stem(w).into_owned();
        assert!(lexicon.synonyms(&stem("tickets")).contains(&stem("issue")));
        assert!(lexicon.synonyms(&stem("issues")).contains(&stem("ticket")));
        assert!(!lexicon.synonyms(&stem("ticket")).contains(&stem("ticket")));
        assert!(lexicon.synonyms("zebra").is_empty());
    }
}
