//! The benchmark harness still runs: one iteration of everything, in a debug build.
//! This checks the harness, not speed; no number is asserted.

#[test]
fn one_iteration_of_every_benchmark() {
    let out = tempfile::tempdir().unwrap();
    let report = out.path().join("BENCHMARKS.md");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_prise-bench"))
        .args(["--smoke", "--out"])
        .arg(&report)
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&report).unwrap();
    for section in [
        "over stdio",
        "Streamable HTTP",
        "Throughput",
        "Mounting",
        "Start-up",
        "Through a gateway",
        "| supergateway 4.0.0, HTTP → stdio |",
        "## Targets",
    ] {
        assert!(text.contains(section), "missing {section}:\n{text}");
    }
    for client in [
        "floor (no SDK)",
        "prise (auto)",
        "rmcp",
        "Python SDK",
        "TypeScript SDK",
    ] {
        assert!(
            text.contains(&format!("| {client} |")),
            "missing {client}:\n{text}"
        );
    }
    assert!(
        std::fs::read_to_string(out.path().join("benchmarks.svg"))
            .unwrap()
            .starts_with("<svg")
    );
}
