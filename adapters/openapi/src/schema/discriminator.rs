//! `oneOf`/`anyOf` with a `discriminator` (OpenAPI 3.1 § 4.8.25 Discriminator Object) as
//! plain JSON Schema 2020-12: the discriminator's value picks the branch, and the arguments
//! are validated against that branch alone.
//!
//! A `oneOf` alone cannot say that: a call valid under the branch it names and also under a
//! laxer one (`Code` requires only `method`) is refused as "valid under more than one of the
//! schemas". So the union becomes one `if`/`then` per branch (`if method is "password" then
//! Password`) beside an `enum` of the known values, all in an `allOf`. Any 2020-12 validator
//! then does what the discriminator means, the model reads the same rule in the tool's
//! input schema, and a refusal names what the chosen branch misses (`'identifier' is a
//! required property`) instead of "not valid under any of the schemas".

use serde_json::{Map, Value, json};

/// Rewrites `out` (converted from `original`) when it is a discriminated union whose every
/// branch is a `$ref` with at least one discriminator value; otherwise leaves it as it is.
pub(super) fn rewrite(original: &Map<String, Value>, out: &mut Map<String, Value>) {
    let Some(property) = original.get("discriminator").and_then(|d| d.get("propertyName")).and_then(Value::as_str)
    else {
        return;
    };
    let Some(keyword) = ["oneOf", "anyOf"].into_iter().find(|k| original.get(*k).is_some_and(Value::is_array)) else {
        return;
    };
    let (Some(Value::Array(written)), Some(Value::Array(converted))) = (original.get(keyword), out.remove(keyword))
    else {
        return;
    };
    if written.len() != converted.len() {
        out.insert(keyword.to_owned(), Value::Array(converted));
        return;
    }
    let mapping = original.get("discriminator").and_then(|d| d.get("mapping")).and_then(Value::as_object);
    let mut rules = Vec::with_capacity(written.len());
    let mut known = Vec::new();
    for (branch, schema) in written.iter().zip(&converted) {
        let values = branch.get("$ref").and_then(Value::as_str).map(|r| values(r, mapping)).unwrap_or_default();
        if values.is_empty() {
            // A branch no value can name: the union stays a union.
            out.insert(keyword.to_owned(), Value::Array(converted));
            return;
        }
        let test = if let [one] = &values[..] { json!({"const": one}) } else { json!({"enum": values}) };
        rules.push(json!({
            "if": {"properties": {property: test}, "required": [property]},
            "then": schema,
        }));
        known.extend(values);
    }
    // Only the property name stays: `mapping` names places in the document, not in the schema.
    out.insert("discriminator".to_owned(), json!({"propertyName": property}));
    let mut all = vec![json!({"properties": {property: {"enum": known}}, "required": [property]})];
    all.extend(rules);
    match out.get_mut("allOf") {
        Some(Value::Array(members)) => members.extend(all),
        _ => {
            out.insert("allOf".to_owned(), Value::Array(all));
        }
    }
}

/// The discriminator values that pick the branch `$ref: r`: the `mapping` keys naming it (by
/// schema name or by reference), else the schema's name, the last segment of the reference
/// (§ 4.8.25.1: "the schema name ... as the implicit mapping").
fn values(r: &str, mapping: Option<&Map<String, Value>>) -> Vec<String> {
    let name = |s: &str| s.rsplit('/').next().unwrap_or_default().to_owned();
    let mapped: Vec<String> = mapping
        .into_iter()
        .flatten()
        .filter(|(_, target)| target.as_str().is_some_and(|t| t == r || name(t) == name(r)))
        .map(|(value, _)| value.clone())
        .collect();
    if mapped.is_empty() { vec![name(r)].into_iter().filter(|n| !n.is_empty()).collect() } else { mapped }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn validator(schema: &Value) -> jsonschema::Validator {
        jsonschema::validator_for(schema).unwrap()
    }

    #[test]
    fn the_discriminator_value_picks_the_one_branch_validated() {
        let original = json!({
            "oneOf": [{"$ref": "#/components/schemas/Password"}, {"$ref": "#/components/schemas/Code"}],
            "discriminator": {"propertyName": "method", "mapping": {"otp": "Code", "sms": "#/components/schemas/Code"}},
        });
        let password = json!({"type": "object", "required": ["method", "identifier", "password"],
            "properties": {"method": {"type": "string"}, "identifier": {"type": "string"}, "password": {"type": "string"}}});
        let code = json!({"type": "object", "required": ["method"], "properties": {"method": {"type": "string"}}});
        let mut out = original.as_object().unwrap().clone();
        out.insert("oneOf".into(), json!([password, code]));
        rewrite(original.as_object().unwrap(), &mut out);
        let schema = Value::Object(out);
        assert!(schema.get("oneOf").is_none());
        assert_eq!(schema["allOf"][0]["properties"]["method"]["enum"], json!(["Password", "otp", "sms"]));
        let v = validator(&schema);
        assert!(v.is_valid(&json!({"method": "Password", "identifier": "u", "password": "p"})));
        assert!(v.is_valid(&json!({"method": "otp"})));
        let short = json!({"method": "Password", "identifier": "u"});
        let e = v.validate(&short).unwrap_err();
        assert!(e.to_string().contains("\"password\" is a required property"), "{e}");
        assert!(!v.is_valid(&json!({"method": "Code"})), "mapped away: only otp and sms name Code");
        assert!(!v.is_valid(&json!({"identifier": "u"})));
    }

    #[test]
    fn a_branch_without_a_name_leaves_the_union_as_it_is() {
        let original = json!({"oneOf": [{"$ref": "#/components/schemas/A"}, {"type": "object"}],
            "discriminator": {"propertyName": "kind"}});
        let mut out = original.as_object().unwrap().clone();
        rewrite(original.as_object().unwrap(), &mut out);
        assert_eq!(Value::Object(out), original);
    }
}
