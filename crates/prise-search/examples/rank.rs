//! Ranks the tools of a JSON file for a task: `cargo run -p prise-search --example
//! rank -- TOOLS.json "what time is it in Tokyo"`. The file is an array of
//! `{"name": "server__tool", "server": "server", "tool": {...}}`, the rows of
//! `prise tools --json`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(file), Some(query)) = (args.next(), args.next()) else {
        eprintln!("usage: rank TOOLS.json QUERY");
        std::process::exit(2);
    };
    let rows: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(file)?)?;
    let tools: Vec<(String, String, rmcp::model::Tool)> = rows
        .into_iter()
        .map(|row| {
            let tool = serde_json::from_value(row["tool"].clone())?;
            Ok((
                row["name"].as_str().unwrap_or_default().to_owned(),
                row["server"].as_str().unwrap_or_default().to_owned(),
                tool,
            ))
        })
        .collect::<Result<_, serde_json::Error>>()?;
    let index = prise_search::ToolIndex::new(
        tools
            .iter()
            .map(|(name, server, tool)| (name.as_str(), server.as_str(), tool)),
    );
    for found in index.search(&query, 5) {
        println!("{:8.3}  {}", found.score, found.name);
    }
    Ok(())
}
