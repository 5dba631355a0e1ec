//! The words of software as people say them: which words stand for one another
//! (delete and remove, ticket and issue), which phrases stand for a word ("get rid
//! of" is delete, "money back" a refund), and which words ask for which action.
//!
//! Written by domain, from how people ask for file, version control, web, memory,
//! time, code hosting, chat, calendar, ticket, database, cluster, storage, payment
//! and mail tools in general, not from any one set of tools or tasks: a list fitted
//! to one set would not carry to the next.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};

/// Words that say nothing of what a tool does.
const STOPWORDS: &str = "a an the of to in on for with and or is are be by from at as it its this that \
    these my me i you your we our please can could would should what which do does how \
    some all into about any just there here want need let us already yet still also \
    really actually anything something anyone someone anywhere somewhere very too so \
    then than but if was were been being have has had got will shall may might must \
    again only own such each other them they their he she him her his who whom whose \
    why when go over s m t re ve ll d";

/// Phrases that stand for a word, read before the query is split into words: what
/// they ask for is not in any of their words ("money back" is not about money). The
/// first word of a phrase may be inflected ("signed up", "looking for").
const PHRASES: &[(&str, &str)] = &[
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

/// Words that stand for one another, a group to a line. A word may be in several
/// groups (a "file" is a document, and to file is to create).
const SYNONYMS: &[&str] = &[
    // What is done.
    "delete remove erase drop destroy trash forget purge wipe discard rm scrap cancel",
    "create make add new file open start raise register generate init mkdir touch",
    "find search look lookup query locate grep hunt seek where filter match",
    "list show enumerate browse which ls overview every exist",
    "get fetch read retrieve load view download see grab cat print display open \
     inspect peek dump say",
    "send post deliver notify tell message ping announce broadcast inform share",
    "update edit modify change patch set alter tweak adjust fix correct replace amend turn",
    "rename move relocate mv transfer",
    "write save store put upload persist record jot",
    "copy duplicate clone cp",
    "run execute exec invoke launch apply trigger perform",
    "stop halt kill cancel terminate abort",
    "reply respond comment answer",
    "react reaction emoji thumbs like upvote emoticon",
    "remember memory recall knowledge know fact memorize memorise note observation",
    "add sum plus total combine",
    "history log recent latest timeline",
    "count tally total",
    "check verify test healthy health",
    // Files and folders.
    "file document doc",
    "directory folder dir path",
    "tree hierarchy structure nested recursive layout",
    "size large big space byte bytes heavy huge",
    "info metadata detail details attribute permission modified created timestamp stat",
    "text content contents inside body say says",
    "image picture photo screenshot pic diagram logo icon media",
    "audio sound recording voice",
    "multiple several both many batch",
    "allowed permitted accessible access",
    // Version control.
    "repository repo project codebase",
    "commit revision sha changeset",
    "stage staged index cached",
    "unstaged uncommitted working dirty pending modified",
    "unstage reset undo revert rollback",
    "branch checkout switch",
    "status state",
    "diff difference compare changes delta",
    "code source definition defined defines function symbol implementation class method usage",
    "pull merge pr ship land",
    "review approve approval",
    // Knowledge, reasoning, time, the web.
    "entity person people company thing node",
    "relation relationship link connect connection relate",
    "think thinking reason reasoning step steps thought thoughts plan sequential \
     stage stages carefully",
    "time clock now current hour minute morning afternoon evening night midnight noon \
     am pm late early date today",
    "date day today tomorrow yesterday week month",
    "timezone zone convert conversion",
    "url web page website link article site html internet online blog",
    "environment env variable variables",
    "sample example test demo",
    "small tiny little",
    // Chat, mail, calendar, tickets.
    "email mail inbox message",
    "message chat dm said mention mentioned discuss discussed talk",
    "channel room thread conversation",
    "draft compose prepare unsent",
    "label tag category",
    "profile bio title role job",
    "event meeting appointment calendar schedule sync agenda booking book standup invite invitation",
    "free available availability slot busy open",
    "issue ticket bug task story defect backlog sprint epic incident",
    "assign give hand owner assignee delegate",
    "transition done resolved resolve close closed progress reopen mark",
    // Databases, clusters, storage, payments.
    "database db sql table postgres select row",
    "query sql select count average aggregate statistic stats metric",
    "schema column field structure type describe",
    "container pod workload",
    "deployment replica replicas scale instance instances copies resize",
    "node machine host worker",
    "cluster kubernetes k8s kubectl",
    "log output stdout stderr crash crashing error restarting fail failing failure broken",
    "manifest yaml spec config deploy rollout",
    "namespace staging production prod",
    "bucket storage object blob s3",
    "payment pay charge invoice bill money cash transaction purchase sale revenue income paid",
    "refund reimburse return reverse chargeback",
    "balance funds cash money payout",
    "amount price cost currency euro dollar usd eur gbp pound yen cent",
    "customer client user account buyer subscriber",
];

/// What a tool does, as a word of its name says (`create_issue`, `list_events`), and
/// the words by which people ask for it, questions included ("what's in the bucket"
/// asks for a list).
pub(crate) const ACTIONS: &[(&str, &str)] = &[
    (
        "create",
        "create make add new open start schedule remember book draft file put raise \
         register mkdir generate touch",
    ),
    ("list", "list show which what browse enumerate ls"),
    (
        "get",
        "get read fetch retrieve view download see what show cat print display \
         inspect dump",
    ),
    (
        "search",
        "search find look lookup locate grep where query hunt seek",
    ),
    (
        "update",
        "update edit modify change set patch transition fix replace alter tweak \
         adjust correct mark",
    ),
    (
        "delete",
        "delete remove erase drop cancel destroy forget purge wipe discard rm",
    ),
    (
        "send",
        "send post tell notify email message ping announce inform",
    ),
    ("write", "write save store put upload record jot"),
    ("comment", "comment reply respond answer"),
    ("move", "move rename relocate mv"),
    ("run", "run execute apply invoke trigger"),
];

/// The lexicon, stemmed as the index is: built once.
pub(crate) struct Lexicon {
    stemmer: Stemmer,
    stopwords: HashSet<&'static str>,
    /// For each stem, the stems that stand for it (itself excluded).
    synonyms: HashMap<String, Vec<String>>,
    /// For each stem of a word that asks for an action, the actions.
    actions: HashMap<String, Vec<&'static str>>,
    /// [`PHRASES`] in the forms of their first words.
    phrases: Vec<(String, &'static str)>,
}

impl Lexicon {
    /// The lexicon.
    pub(crate) fn get() -> &'static Lexicon {
        static LEXICON: OnceLock<Lexicon> = OnceLock::new();
        LEXICON.get_or_init(|| {
            let stemmer = Stemmer::create(Algorithm::English);
            let stem = |word: &str| stemmer.stem(word).into_owned();
            let mut synonyms: HashMap<String, Vec<String>> = HashMap::new();
            for group in SYNONYMS {
                let stems: Vec<String> = group.split_whitespace().map(stem).collect();
                for one in &stems {
                    let entry = synonyms.entry(one.clone()).or_default();
                    for other in stems.iter().filter(|other| *other != one) {
                        if !entry.contains(other) {
                            entry.push(other.clone());
                        }
                    }
                }
            }
            let mut actions: HashMap<String, Vec<&'static str>> = HashMap::new();
            for (action, words) in ACTIONS {
                for word in words.split_whitespace() {
                    let entry = actions.entry(stem(word)).or_default();
                    if !entry.contains(action) {
                        entry.push(action);
                    }
                }
            }
            Lexicon {
                stopwords: STOPWORDS.split_whitespace().collect(),
                synonyms,
                actions,
                phrases: phrase_forms(),
                stemmer,
            }
        })
    }

    /// The stem of `word`, as the index has it.
    pub(crate) fn stem<'w>(&self, word: &'w str) -> std::borrow::Cow<'w, str> {
        self.stemmer.stem(word)
    }

    /// Whether `word` (lower-case) says nothing of what a tool does.
    pub(crate) fn is_stopword(&self, word: &str) -> bool {
        self.stopwords.contains(word)
    }

    /// The stems that stand for `stem`.
    pub(crate) fn synonyms(&self, stem: &str) -> &[String] {
        self.synonyms.get(stem).map_or(&[], Vec::as_slice)
    }

    /// The actions `word` (lower-case, in any of its forms but the past: "who created
    /// it" asks about a file, not for a creation) asks for.
    pub(crate) fn actions_of(&self, word: &str) -> &[&'static str] {
        let stem = if word.ends_with("ed") {
            std::borrow::Cow::Borrowed(word)
        } else {
            self.stem(word)
        };
        self.actions.get(stem.as_ref()).map_or(&[], Vec::as_slice)
    }
}

/// Whether `word` is the name of an action (`comment` in `add_issue_comment`).
pub(crate) fn is_action(word: &str) -> Option<&'static str> {
    ACTIONS
        .iter()
        .find(|(action, _)| *action == word)
        .map(|(action, _)| *action)
}

/// `query` lower-cased with each phrase of [`PHRASES`] replaced by its word, where
/// the phrase stands as whole words, its first word in any of its usual forms
/// ("signed up", "looking for").
pub(crate) fn with_phrases_read(query: &str) -> String {
    let mut text = format!(" {} ", query.to_lowercase());
    for (phrase, word) in &Lexicon::get().phrases {
        replace_whole(&mut text, phrase, word);
    }
    let_know_read(&text)
}

/// `text` with "let ... know" read as "tell ...": "let the team know" is to tell it.
fn let_know_read(text: &str) -> String {
    let words: Vec<&str> = text.split(' ').collect();
    let mut out: Vec<&str> = Vec::with_capacity(words.len());
    let mut i = 0;
    while i < words.len() {
        let know = (words[i] == "let")
            .then(|| (i + 2..words.len().min(i + 6)).find(|&j| words[j] == "know"))
            .flatten();
        match know {
            Some(j) => {
                out.push("tell");
                out.extend(&words[i + 1..j]);
                i = j + 1;
            }
            None => {
                out.push(words[i]);
                i += 1;
            }
        }
    }
    out.join(" ")
}

/// Each phrase in each form of its first word, with the word it stands for.
fn phrase_forms() -> Vec<(String, &'static str)> {
    let mut all = Vec::new();
    for (phrase, word) in PHRASES {
        let (first, tail) = phrase.split_once(' ').unwrap_or((phrase, ""));
        for form in forms(first) {
            let phrase = if tail.is_empty() {
                form
            } else {
                format!("{form} {tail}")
            };
            all.push((phrase, *word));
        }
    }
    all
}

/// A verb's usual forms: `sign`, `signs`, `signed`, `signing`, and for `set`,
/// `setting`; for `close`, `closed` and `closing`.
fn forms(verb: &str) -> Vec<String> {
    let mut forms = vec![verb.to_owned(), format!("{verb}s"), format!("{verb}es")];
    match verb.strip_suffix('e') {
        Some(stem) => forms.extend([format!("{verb}d"), format!("{stem}ing")]),
        None => {
            forms.extend([format!("{verb}ed"), format!("{verb}ing")]);
            // A short verb ending in a consonant doubles it: set, setting; shut, shutting.
            let mut chars = verb.chars().rev();
            if let (Some(last), Some(before)) = (chars.next(), chars.next())
                && verb.len() <= 4
                && !"aeiouwy".contains(last)
                && "aeiou".contains(before)
            {
                forms.extend([format!("{verb}{last}ed"), format!("{verb}{last}ing")]);
            }
        }
    }
    forms
}

/// Replaces `phrase` in `text` with `word` wherever it stands as whole words.
fn replace_whole(text: &mut String, phrase: &str, word: &str) {
    let bounded = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
    let mut from = 0;
    while let Some(at) = text[from..].find(phrase).map(|at| at + from) {
        let end = at + phrase.len();
        if bounded(text[..at].chars().next_back()) && bounded(text[end..].chars().next()) {
            text.replace_range(at..end, word);
            from = at + word.len();
        } else {
            from = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_are_read_as_whole_words_in_their_forms() {
        assert_eq!(
            with_phrases_read("Get rid of old.zip, then look through the inbox").trim(),
            "delete old.zip, then search the inbox"
        );
        assert_eq!(
            with_phrases_read("who signed up, looking for setting up").trim(),
            "who create, search create"
        );
        assert_eq!(
            with_phrases_read("let the whole team know").trim(),
            "tell the whole team"
        );
        // Not inside other words.
        assert_eq!(
            with_phrases_read("the outlook format").trim(),
            "the outlook format"
        );
    }

    #[test]
    fn synonyms_and_actions_are_found_by_stem() {
        let lexicon = Lexicon::get();
        let stem = |w: &str| lexicon.stem(w).into_owned();
        assert!(lexicon.synonyms(&stem("tickets")).contains(&stem("issue")));
        assert!(lexicon.synonyms(&stem("issues")).contains(&stem("ticket")));
        assert!(!lexicon.synonyms(&stem("ticket")).contains(&stem("ticket")));
        assert!(lexicon.synonyms("zebra").is_empty());
        assert_eq!(lexicon.actions_of("deleting"), ["delete"]);
        assert_eq!(lexicon.actions_of("shows"), ["list", "get"]);
        assert!(lexicon.is_stopword("the") && !lexicon.is_stopword("file"));
    }
}
