//! Tool input schemas in the shape each provider accepts.
//!
//! MCP servers write full JSON Schema; providers accept dialects of it. All of them
//! want an object at the top with `properties` and reject top-level `oneOf`/`anyOf`/
//! `allOf`; beyond that OpenAI-compatible servers choke on some `format`s (llama.cpp
//! and vLLM turn schemas into grammars), Anthropic takes the rest, and Gemini accepts
//! only an OpenAPI subset: no `$ref`, no `additionalProperties`, no `const`, string
//! enums only, `nullable` instead of `"type": [.., "null"]`.

use serde_json::{Map, Value, json};

/// Which dialect of JSON Schema a provider parses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaDialect {
    /// OpenAI and the servers that copy its API (Ollama, vLLM, llama.cpp...).
    OpenAi,
    /// Anthropic's Messages API.
    Anthropic,
    /// Google's Gemini, including its OpenAI-compatible endpoint.
    Gemini,
}

/// How deep `$ref`s are inlined for Gemini; a recursive schema stops there.
const MAX_REF_DEPTH: usize = 8;

/// `schema` adapted to `dialect`. Never fails: what a dialect cannot say is dropped, so
/// the model sees a looser schema rather than the provider refusing the request.
pub fn adapt_schema(schema: &Value, dialect: SchemaDialect) -> Value {
    let mut top = match schema {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    top.remove("$schema");
    top.remove("$id");
    merge_alternatives(&mut top);
    top.insert("type".to_owned(), json!("object"));
    top.entry("properties").or_insert_with(|| json!({}));
    match dialect {
        SchemaDialect::OpenAi => {
            let mut schema = Value::Object(top);
            drop_unusual_formats(&mut schema);
            schema
        }
        SchemaDialect::Anthropic => Value::Object(top),
        SchemaDialect::Gemini => {
            let mut definitions = Map::new();
            for key in ["$defs", "definitions"] {
                if let Some(Value::Object(defs)) = top.remove(key) {
                    definitions.extend(defs);
                }
            }
            gemini(&Value::Object(top), &definitions, 0)
        }
    }
}

/// Top-level `oneOf`/`anyOf`/`allOf`: their properties join the object's (`required`
/// joins too for `allOf`, whose parts all hold).
fn merge_alternatives(schema: &mut Map<String, Value>) {
    for key in ["oneOf", "anyOf", "allOf"] {
        let Some(Value::Array(parts)) = schema.remove(key) else {
            continue;
        };
        for part in parts {
            if let Some(Value::Object(extra)) = part.get("properties") {
                let properties = schema.entry("properties").or_insert_with(|| json!({}));
                if let Some(target) = properties.as_object_mut() {
                    for (name, property) in extra {
                        target
                            .entry(name.clone())
                            .or_insert_with(|| property.clone());
                    }
                }
            }
            if key == "allOf"
                && let Some(Value::Array(names)) = part.get("required")
            {
                let required = schema.entry("required").or_insert_with(|| json!([]));
                if let Some(required) = required.as_array_mut() {
                    for name in names {
                        if !required.contains(name) {
                            required.push(name.clone());
                        }
                    }
                }
            }
        }
    }
}

fn drop_unusual_formats(value: &mut Value) {
    const KEPT: [&str; 6] = ["date-time", "date", "time", "email", "uri", "uuid"];
    match value {
        Value::Object(map) => {
            if map
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| !KEPT.contains(&f))
            {
                map.remove("format");
            }
            map.values_mut().for_each(drop_unusual_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_unusual_formats),
        _ => {}
    }
}

/// One schema node in Gemini's subset.
fn gemini(node: &Value, definitions: &Map<String, Value>, depth: usize) -> Value {
    let Value::Object(node) = node else {
        return json!({});
    };
    if let Some(reference) = node.get("$ref").and_then(Value::as_str) {
        let name = reference
            .strip_prefix("#/$defs/")
            .or_else(|| reference.strip_prefix("#/definitions/"));
        return match name.and_then(|name| definitions.get(name)) {
            Some(target) if depth < MAX_REF_DEPTH => gemini(target, definitions, depth + 1),
            // Unknown, remote or too deep: say what it is rather than lose the field.
            _ => json!({"type": "object", "description": format!("see {reference}")}),
        };
    }
    let mut out = Map::new();
    match node.get("type") {
        Some(Value::Array(types)) => {
            let real: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
            if let Some(first) = real.first() {
                out.insert("type".to_owned(), (*first).clone());
            }
            if real.len() < types.len() {
                out.insert("nullable".to_owned(), json!(true));
            }
        }
        Some(kind) => {
            out.insert("type".to_owned(), kind.clone());
        }
        None => {}
    }
    let kind = out
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    for (key, value) in node {
        match key.as_str() {
            "description" | "title" | "nullable" | "required" | "minItems" | "maxItems"
            | "minProperties" | "maxProperties" | "minLength" | "maxLength" | "pattern"
            | "minimum" | "maximum" | "default" | "example" => {
                out.insert(key.clone(), value.clone());
            }
            "format" => {
                let allowed: &[&str] = match kind.as_str() {
                    "string" => &["enum", "date-time"],
                    "integer" => &["int32", "int64"],
                    "number" => &["float", "double"],
                    _ => &[],
                };
                if value.as_str().is_some_and(|f| allowed.contains(&f)) {
                    out.insert(key.clone(), value.clone());
                }
            }
            // Gemini's enums are strings.
            "enum"
                if value
                    .as_array()
                    .is_some_and(|v| v.iter().all(Value::is_string)) =>
            {
                out.insert(key.clone(), value.clone());
            }
            "const" if value.is_string() => {
                out.insert("enum".to_owned(), json!([value]));
                out.entry("type").or_insert_with(|| json!("string"));
            }
            "properties" => {
                let properties: Map<String, Value> = value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, property)| (name.clone(), gemini(property, definitions, depth)))
                    .collect();
                out.insert(key.clone(), Value::Object(properties));
            }
            "items" => {
                out.insert(key.clone(), gemini(value, definitions, depth));
            }
            "anyOf" | "oneOf" => {
                let parts: Vec<Value> = value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|part| gemini(part, definitions, depth))
                    .collect();
                out.insert("anyOf".to_owned(), Value::Array(parts));
            }
            // Everything else ($ref handled above, additionalProperties, not, allOf
            // below the top, exclusive bounds, patternProperties...) is not Gemini's.
            _ => {}
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use SchemaDialect::*;

    const ALL: [SchemaDialect; 3] = [OpenAi, Anthropic, Gemini];

    #[test]
    fn schema_keyword_is_dropped() {
        for dialect in ALL {
            let adapted = adapt_schema(
                &json!({"$schema": "http://json-schema.org/draft-07/schema#", "$id": "x", "type": "object", "properties": {}}),
                dialect,
            );
            assert_eq!(
                adapted,
                json!({"type": "object", "properties": {}}),
                "{dialect:?}"
            );
        }
    }

    #[test]
    fn the_top_is_always_an_object_with_properties() {
        for dialect in ALL {
            for schema in [
                json!(null),
                json!({}),
                json!({"type": "object"}),
                json!(true),
            ] {
                assert_eq!(
                    adapt_schema(&schema, dialect),
                    json!({"type": "object", "properties": {}}),
                    "{dialect:?} {schema}"
                );
            }
        }
    }

    #[test]
    fn top_level_alternatives_are_merged() {
        let schema = json!({"oneOf": [{"properties": {"x": {"type": "number"}}, "required": ["x"]},
                                      {"properties": {"y": {"type": "string"}}}]});
        for dialect in ALL {
            let merged = adapt_schema(&schema, dialect);
            assert_eq!(
                merged["properties"],
                json!({"x": {"type": "number"}, "y": {"type": "string"}}),
                "{dialect:?}"
            );
            assert!(merged.get("oneOf").is_none());
            // Either alternative may be given, so neither property is required.
            assert!(merged.get("required").is_none());
        }
        let all_of = json!({"allOf": [{"properties": {"a": {"type": "string"}}, "required": ["a"]},
                                      {"properties": {"b": {"type": "string"}}, "required": ["b"]}]});
        assert_eq!(
            adapt_schema(&all_of, Anthropic)["required"],
            json!(["a", "b"])
        );
    }

    #[test]
    fn formats_are_kept_where_the_provider_takes_them() {
        let schema = json!({"properties": {"when": {"type": "string", "format": "date-time"},
                                           "blob": {"type": "string", "format": "byte"},
                                           "mail": {"type": "string", "format": "email"},
                                           "n": {"type": "integer", "format": "int64"}}});
        let formats = |dialect| {
            let adapted = adapt_schema(&schema, dialect);
            ["when", "blob", "mail", "n"].map(|p| {
                adapted["properties"][p]["format"]
                    .as_str()
                    .map(str::to_owned)
            })
        };
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(
            formats(OpenAi),
            [some("date-time"), None, some("email"), None]
        );
        assert_eq!(
            formats(Anthropic),
            [
                some("date-time"),
                some("byte"),
                some("email"),
                some("int64")
            ]
        );
        assert_eq!(
            formats(Gemini),
            [some("date-time"), None, None, some("int64")]
        );
    }

    #[test]
    fn gemini_gets_refs_inlined() {
        let schema = json!({
            "properties": {"point": {"$ref": "#/$defs/Point"}, "old": {"$ref": "#/definitions/Old"}},
            "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}}},
            "definitions": {"Old": {"type": "string"}}
        });
        let adapted = adapt_schema(&schema, Gemini);
        assert_eq!(
            adapted,
            json!({"type": "object", "properties": {
                "point": {"type": "object", "properties": {"x": {"type": "number"}}},
                "old": {"type": "string"}}})
        );
    }

    #[test]
    fn gemini_stops_inlining_recursive_refs() {
        let schema = json!({
            "properties": {"tree": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}}
        });
        let mut node = &adapt_schema(&schema, Gemini)["properties"]["tree"];
        let mut depth = 0;
        while node["properties"]["child"].is_object() {
            node = &node["properties"]["child"];
            depth += 1;
        }
        assert_eq!(depth, MAX_REF_DEPTH);
        assert_eq!(node["description"], "see #/$defs/Node");
    }

    #[test]
    fn gemini_gets_nullable_instead_of_null_types() {
        let adapted = adapt_schema(
            &json!({"properties": {"name": {"type": ["string", "null"]}}}),
            Gemini,
        );
        assert_eq!(
            adapted["properties"]["name"],
            json!({"type": "string", "nullable": true})
        );
    }

    #[test]
    fn gemini_gets_string_enums_only_and_const_as_enum() {
        let adapted = adapt_schema(
            &json!({"properties": {
                "unit": {"type": "string", "enum": ["c", "f"]},
                "level": {"type": "integer", "enum": [1, 2, 3]},
                "kind": {"const": "circle"}}}),
            Gemini,
        );
        assert_eq!(adapted["properties"]["unit"]["enum"], json!(["c", "f"]));
        assert_eq!(adapted["properties"]["level"], json!({"type": "integer"}));
        assert_eq!(
            adapted["properties"]["kind"],
            json!({"type": "string", "enum": ["circle"]})
        );
    }

    #[test]
    fn gemini_drops_what_its_subset_lacks() {
        let schema = json!({
            "additionalProperties": false,
            "properties": {"tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"},
                                    "uniqueItems": true},
                           "n": {"type": "number", "exclusiveMinimum": 0, "minimum": 1},
                           "either": {"oneOf": [{"type": "string"}, {"type": "number"}]}}
        });
        let adapted = adapt_schema(&schema, Gemini);
        assert_eq!(
            adapted,
            json!({"type": "object", "properties": {
                "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}},
                "n": {"type": "number", "minimum": 1},
                "either": {"anyOf": [{"type": "string"}, {"type": "number"}]}}})
        );
        // The others keep them.
        assert_eq!(
            adapt_schema(&schema, Anthropic)["additionalProperties"],
            false
        );
        assert_eq!(adapt_schema(&schema, OpenAi)["additionalProperties"], false);
    }
}
