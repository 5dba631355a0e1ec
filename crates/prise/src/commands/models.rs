//! `prise models`: what the model endpoint serves, to pick a name for `-m`.

use std::io::Write;

use prise_agent::configured;
use prise_config::Config;

use crate::cli::ModelsArgs;
use crate::commands::run::{build_failure, model_failure};
use crate::failure::Failure;
use crate::output;

/// Lists the names the endpoint of the configured (or named) model answers with.
pub async fn list(config: Option<Config>, args: ModelsArgs) -> Result<(), Failure> {
    let settings = config.map(|c| c.model).unwrap_or_default();
    let (spec, endpoint) = configured::endpoint(&args.which.model_choice(), &settings, &|name| {
        std::env::var(name).ok()
    })
    .map_err(build_failure)?;
    let names = prise_llm::available_models(spec.provider, &endpoint)
        .await
        .map_err(model_failure)?;
    let mut out = output::stdout();
    if args.json {
        output::json(&mut out, &names)?;
    } else if names.is_empty() {
        writeln!(out, "{} serves no model", endpoint.base_url)?;
    } else {
        for name in &names {
            let current = if *name == spec.model {
                "  (the model in use)"
            } else {
                ""
            };
            writeln!(out, "{}{current}", output::revealed(name))?;
        }
    }
    out.flush()?;
    Ok(())
}
