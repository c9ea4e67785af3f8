//! The last step of a schema: whatever the 2020-12 metaschema refuses is dropped.

use serde_json::Value;

/// Drops every keyword the 2020-12 metaschema refuses (each error's instance location in
/// the schema), round by round; returns how many were dropped. The root itself is never
/// dropped: a root the metaschema refuses is an error.
pub fn make_valid(schema: &mut Value) -> Result<usize, String> {
    let meta = jsonschema::draft202012::meta::validator();
    let mut dropped = 0;
    for _ in 0..32 {
        let mut paths: Vec<String> = meta.iter_errors(schema).map(|e| e.instance_path().as_str().to_owned()).collect();
        if paths.is_empty() {
            return Ok(dropped);
        }
        if paths.iter().any(String::is_empty) {
            return Err("the schema root is not a valid JSON Schema".to_owned());
        }
        // Deepest and last first, so removing one does not move another.
        paths.sort();
        paths.dedup();
        for path in paths.iter().rev() {
            if remove(schema, path) {
                dropped += 1;
            }
        }
    }
    Err("the schema stays invalid after dropping its invalid keywords".to_owned())
}

fn remove(root: &mut Value, pointer: &str) -> bool {
    let Some((parent, last)) = pointer.rsplit_once('/') else { return false };
    let last = last.replace("~1", "/").replace("~0", "~");
    match root.pointer_mut(parent) {
        Some(Value::Object(map)) => map.remove(&last).is_some(),
        Some(Value::Array(items)) => match last.parse::<usize>() {
            Ok(i) if i < items.len() => {
                items.remove(i);
                true
            }
            _ => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn invalid_keywords_are_dropped_until_valid() {
        let mut v = json!({"type": "object", "properties": {"f": {"type": "file", "required": true, "minLength": -1}}});
        assert_eq!(make_valid(&mut v).unwrap(), 3);
        assert_eq!(v, json!({"type": "object", "properties": {"f": {}}}));
        assert!(make_valid(&mut json!([1])).is_err());
    }
}
