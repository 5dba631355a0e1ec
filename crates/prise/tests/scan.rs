//! `prise scan` on a labelled corpus: every tool of the reference servers the tests
//! install (server-everything, server-filesystem, server-memory,
//! server-sequential-thinking, mcp-server-time, mcp-server-fetch, mcp-server-git, and
//! prise's own docs server) is benign; every tool of `fixtures/poisoned_server.py` is
//! an attack (`fixtures/poisoned_tools.json`: published tool-poisoning examples and
//! variants written as attacks, in English, French and Chinese, hidden and encoded).
//! Targets: at least 90 % of the attacks flagged, at most 2 % of the real tools.

mod common;

use std::path::Path;

use common::{peers, prise, reference_servers};
use serde_json::{Value, json};

/// The reference servers, and the attacks' server when `attacks`.
fn config(dir: &Path, attacks: bool) -> Value {
    let mut config = reference_servers(dir);
    if attacks {
        config["mcpServers"]["poisoned"] = json!({"command": peers().join("venv/bin/python"),
            "args": [Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/poisoned_server.py")]});
    }
    config
}

/// `prise scan --json` of `config`: its report, and whether anything was found.
fn scan(home: &Path, config: &Value) -> (Vec<Value>, bool) {
    let out = prise(home)
        .args(["--config", &config.to_string(), "scan", "--json"])
        .output()
        .unwrap();
    let found = match out.status.code() {
        Some(0) => false,
        // Findings: exit 1, the report still printed, one line on stderr.
        Some(1) => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains("tools have findings"), "{stderr}");
            true
        }
        _ => panic!("{out:?}"),
    };
    (serde_json::from_slice(&out.stdout).unwrap(), found)
}

/// The kinds of each finding of `tool` in a `scan --json` report.
fn kinds<'a>(report: &'a [Value], tool: &str) -> Vec<&'a str> {
    let row = report
        .iter()
        .find(|r| r["tool"] == tool)
        .unwrap_or_else(|| panic!("{tool} is not in the report"));
    row["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect()
}

#[test]
fn the_corpus_attacks_are_flagged_and_the_real_tools_are_not() {
    let home = tempfile::tempdir().unwrap();
    // The real tools on their own (a copy of one among the attacks would flag it too).
    let (real, _) = scan(home.path(), &config(home.path(), false));
    let (report, found) = scan(home.path(), &config(home.path(), true));
    assert!(found);

    let flagged = |row: &&&Value| !row["findings"].as_array().unwrap().is_empty();
    let attacks: Vec<&Value> = report
        .iter()
        .filter(|r| r["tool"].as_str().unwrap().starts_with("poisoned__"))
        .collect();
    let attacks_flagged = attacks.iter().filter(flagged).count();
    let real_flagged: Vec<&str> = real
        .iter()
        .filter(|r| !r["findings"].as_array().unwrap().is_empty())
        .map(|r| r["tool"].as_str().unwrap())
        .collect();
    eprintln!(
        "prise scan: {attacks_flagged} of {} attacks flagged ({:.1} %), {} of {} real tools ({:.1} %): {real_flagged:?}",
        attacks.len(),
        100.0 * attacks_flagged as f64 / attacks.len() as f64,
        real_flagged.len(),
        real.len(),
        100.0 * real_flagged.len() as f64 / real.len() as f64,
    );
    assert_eq!(attacks.len(), 32);
    assert!(
        real.len() >= 50,
        "the reference servers list {} tools",
        real.len()
    );
    assert!(attacks_flagged * 100 >= attacks.len() * 90);
    assert!(
        real_flagged.len() * 100 <= real.len() * 2,
        "{real_flagged:?}"
    );

    // What is found in the published examples, and in a few variants.
    let add = kinds(&report, "poisoned__add");
    assert!(
        add.contains(&"secret-files") && add.contains(&"instructions"),
        "{add:?}"
    );
    let shadowing = kinds(&report, "poisoned__add_numbers");
    assert!(shadowing.contains(&"shadowing"), "{shadowing:?}");
    assert!(kinds(&report, "poisoned__weather").contains(&"hidden-characters"));
    assert!(kinds(&report, "poisoned__summarise").contains(&"encoded"));
    assert!(kinds(&report, "poisoned__stats").contains(&"exfiltration"));
    // A tool that names server-filesystem's read_file.
    assert!(kinds(&report, "poisoned__file_mirror").contains(&"shadowing"));
    // Passes for mcp-server-fetch by copying its description.
    assert_eq!(kinds(&report, "poisoned__web_fetch"), ["shadowing"]);
    // Reads like an override; is not one. (Beside the copy above, the copy is named.)
    assert_eq!(kinds(&real, "fetch__fetch"), Vec::<&str>::new());
    assert_eq!(kinds(&report, "fetch__fetch"), ["shadowing"]);
    // Each tool's pin state: the real ones pinned; an attack flagged when its own
    // server's tools suffice to find it (shadowing another server's tool needs the
    // other server), withheld until someone accepts it.
    assert!(real.iter().all(|r| r["pin"] == "pinned"), "{real:?}");
    let withheld = attacks.iter().filter(|r| r["pin"] == "flagged").count();
    assert!(
        withheld * 100 >= attacks.len() * 80,
        "{withheld} of {}",
        attacks.len()
    );
    assert!(
        report
            .iter()
            .filter(|r| r["pin"] == "flagged")
            .all(|r| r["tool"].as_str().unwrap().starts_with("poisoned__")),
        "{report:?}"
    );
}

#[test]
fn a_clean_server_exits_0_and_names_its_tools() {
    let home = tempfile::tempdir().unwrap();
    let config = json!({"mcpServers": {
        "time": {"command": peers().join("venv/bin/mcp-server-time")},
    }})
    .to_string();
    let out = prise(home.path())
        .args(["--config", &config, "scan"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.starts_with("TOOL"), "{table}");
    assert!(
        table.contains("time__get_current_time") && table.contains("clean"),
        "{table}"
    );
}
