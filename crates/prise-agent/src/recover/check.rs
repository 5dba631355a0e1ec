//! A recovered call's arguments against the tool's schema: the usual slips of a
//! model writing JSON by hand fixed (a number written as a string, a list as JSON
//! text), the rest said in words the model can act on.

use serde_json::{Map, Value};

/// Makes `arguments` fit `schema` where the fix is certain (types of top-level
/// properties), then checks what is required, each property's type and choices, and
/// unknown names where the schema forbids them. `Err` says what is wrong.
pub fn check_arguments(arguments: &mut Value, schema: &Value) -> Result<(), String> {
    if arguments.is_null() {
        *arguments = Value::Object(Map::new());
    }
    let Value::Object(given) = arguments else {
        return Err("the arguments must be a JSON object of parameter names and values".to_owned());
    };
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut problems = Vec::new();
    for required in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !given.contains_key(required) {
            problems.push(format!("`{required}` is required"));
        }
    }
    for (key, value) in given.iter_mut() {
        let Some(property) = properties.get(key) else {
            if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
                problems.push(format!("there is no parameter `{key}`"));
            }
            continue;
        };
        coerce(value, property);
        if let Some(problem) = misfit(value, property) {
            problems.push(format!("`{key}` {problem}"));
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = properties
        .iter()
        .map(|(name, property)| {
            let kind = types(property).join(" or ");
            if kind.is_empty() {
                name.clone()
            } else {
                format!("{name} ({kind})")
            }
        })
        .collect();
    Err(format!(
        "{}; its parameters: {}",
        problems.join("; "),
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        }
    ))
}

/// The types a property allows.
fn types(property: &Value) -> Vec<&str> {
    match property.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Rewrites a value into the property's type when that is certain.
fn coerce(value: &mut Value, property: &Value) {
    let kinds = types(property);
    if kinds.is_empty() || fits(value, &kinds) {
        return;
    }
    let fixed = match (&*value, kinds[0]) {
        (Value::Number(n), "string") => Some(Value::String(n.to_string())),
        (Value::Bool(b), "string") => Some(Value::String(b.to_string())),
        (Value::String(s), "integer") => s.trim().parse::<i64>().ok().map(Value::from),
        (Value::String(s), "number") => s
            .trim()
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number),
        (Value::Number(n), "integer") => n
            .as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() < 9e15)
            .map(|f| Value::from(f as i64)),
        (Value::String(s), "boolean") => match s.trim() {
            "true" | "True" => Some(Value::Bool(true)),
            "false" | "False" => Some(Value::Bool(false)),
            _ => None,
        },
        (Value::String(s), "array" | "object") => serde_json::from_str::<Value>(s)
            .ok()
            .filter(|v| fits(v, &kinds)),
        _ => None,
    };
    if let Some(fixed) = fixed {
        *value = fixed;
    }
}

fn fits(value: &Value, kinds: &[&str]) -> bool {
    kinds.iter().any(|kind| match *kind {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    })
}

/// What is wrong with a value for its property, if anything.
fn misfit(value: &Value, property: &Value) -> Option<String> {
    let kinds = types(property);
    if !kinds.is_empty() && !fits(value, &kinds) {
        return Some(format!(
            "must be {}, not {value}",
            with_article(&kinds.join(" or "))
        ));
    }
    if let Some(choices) = property.get("enum").and_then(Value::as_array)
        && !choices.contains(value)
    {
        let shown: Vec<String> = choices.iter().map(Value::to_string).collect();
        return Some(format!("must be one of {}, not {value}", shown.join(", ")));
    }
    None
}

fn with_article(kind: &str) -> String {
    match kind.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u') => format!("an {kind}"),
        _ => format!("a {kind}"),
    }
}

#[cfg(test)]
mod tests {
    use super::check_arguments;
    use serde_json::json;

    fn schema() -> serde_json::Value {
        json!({"type": "object", "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer"},
            "unit": {"type": "string", "enum": ["c", "f"]},
            "tags": {"type": "array"}
        }, "required": ["city"], "additionalProperties": false})
    }

    #[test]
    fn slips_are_fixed_and_the_rest_said() {
        let mut args = json!({"city": 75001, "days": "3", "tags": "[\"a\"]"});
        assert_eq!(check_arguments(&mut args, &schema()), Ok(()));
        assert_eq!(args, json!({"city": "75001", "days": 3, "tags": ["a"]}));
        let mut args = json!({"days": "three", "unit": "k", "cty": "x"});
        assert_eq!(
            check_arguments(&mut args, &schema()).unwrap_err(),
            "`city` is required; `days` must be an integer, not \"three\"; `unit` must be one of \"c\", \
             \"f\", not \"k\"; there is no parameter `cty`; its parameters: city (string), days (integer), \
             unit (string), tags (array)"
        );
        let mut none = serde_json::Value::Null;
        assert!(check_arguments(&mut none, &json!({"type": "object"})).is_ok());
        assert_eq!(none, json!({}));
    }
}
