//! OpenAPI schemas as JSON Schema 2020-12 (the dialect of MCP input schemas, MCP 2026-07-28
//! basic § JSON Schema usage):
//!
//! - every `$ref` (within the document or to a sibling file) becomes `#/$defs/<name>`, each
//!   target converted once: recursive schemas stay references, never inlined without end;
//! - `allOf` members are merged into one object schema when they do not conflict (a
//!   conflicting member keeps the `allOf`); `oneOf`/`anyOf` and `discriminator` stay as they
//!   are, so a required tag stays required;
//! - OpenAPI 3.0's dialect is translated: `nullable`, boolean `exclusiveMinimum/Maximum`,
//!   tuple `items`; `x-*`, `xml`, `example` and other annotations a model does not need are
//!   dropped;
//! - [`make_valid`] finally drops whatever keyword still breaks the 2020-12 metaschema (real
//!   documents have `type: file`, `required: true` on properties, negative lengths, ...).

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::source::Documents;

/// Deepest nesting of inline schemas followed (beyond it: any value).
const MAX_DEPTH: usize = 64;

/// Converts the schemas of one document set; remembers every converted `$ref` target.
#[derive(Debug)]
pub struct Schemas<'d> {
    docs: &'d Documents,
    v30: bool,
    /// Converted targets by `$defs` name; `None` while being converted (a cycle).
    defs: HashMap<String, Option<Value>>,
    names: HashMap<(usize, String), String>,
    /// Defs in their final form, with their JSON size.
    finals: HashMap<String, (Value, usize)>,
    /// `$ref`s that point nowhere (each became an unconstrained schema).
    pub unresolved: usize,
}

impl<'d> Schemas<'d> {
    /// `v30`: the document is OpenAPI 3.0 (its schema dialect is translated).
    pub fn new(docs: &'d Documents, v30: bool) -> Self {
        Self { docs, v30, defs: HashMap::new(), names: HashMap::new(), finals: HashMap::new(), unresolved: 0 }
    }

    /// The documents.
    pub fn docs(&self) -> &'d Documents {
        self.docs
    }

    /// Follows `$ref`s of a non-schema object (a parameter, a request body) to the object.
    pub fn deref<'v>(&self, mut doc: usize, mut v: &'v Value) -> Option<(usize, &'v Value)>
    where
        'd: 'v,
    {
        for _ in 0..16 {
            let Some(r) = v.get("$ref").and_then(Value::as_str) else { return Some((doc, v)) };
            let (d, pointer) = self.docs.resolve(doc, r)?;
            doc = d;
            v = self.docs.get(d, &pointer)?;
        }
        None
    }

    /// The schema `s` (found in document `doc`) in 2020-12.
    pub fn convert(&mut self, doc: usize, s: &Value) -> Value {
        self.convert_at(doc, s, 0)
    }

    fn convert_at(&mut self, doc: usize, s: &Value, depth: usize) -> Value {
        let Value::Object(map) = s else {
            return if s.is_boolean() { s.clone() } else { json!({}) };
        };
        if depth > MAX_DEPTH {
            return json!({});
        }
        if let Some(Value::String(r)) = map.get("$ref") {
            let target = self.reference(doc, r);
            // 3.0: siblings of `$ref` are ignored; 3.1 (2020-12): they apply beside it.
            if self.v30 || map.len() == 1 || target.get("$ref").is_none() {
                return target;
            }
            let mut rest = map.clone();
            rest.remove("$ref");
            let mut out = self.convert_object(doc, &rest, depth);
            if let Value::Object(o) = &mut out {
                o.insert("$ref".to_owned(), target["$ref"].clone());
            }
            return out;
        }
        self.convert_object(doc, map, depth)
    }

    fn convert_object(&mut self, doc: usize, map: &Map<String, Value>, depth: usize) -> Value {
        let mut out = Map::with_capacity(map.len());
        let sub = |this: &mut Self, v: &Value| this.convert_at(doc, v, depth + 1);
        for (k, v) in map {
            match k.as_str() {
                k if k.starts_with("x-") => {}
                // Annotations a model does not need, and keywords that would move the base URI
                // or shadow our `$defs` (references into them are hoisted like any other).
                "xml" | "externalDocs" | "example" | "examples" | "$schema" | "$id" | "$anchor" | "$dynamicAnchor"
                | "$comment" | "$defs" | "definitions" | "id" | "nullable" => {}
                "properties" | "patternProperties" | "dependentSchemas" => {
                    let Value::Object(props) = v else { continue };
                    let converted = props.iter().map(|(pk, pv)| (pk.clone(), sub(self, pv))).collect();
                    out.insert(k.to_owned(), Value::Object(converted));
                }
                "items" if v.is_array() => {
                    let items = v.as_array().into_iter().flatten().map(|i| sub(self, i)).collect();
                    out.insert("prefixItems".to_owned(), Value::Array(items));
                }
                "items"
                | "additionalProperties"
                | "unevaluatedProperties"
                | "unevaluatedItems"
                | "not"
                | "if"
                | "then"
                | "else"
                | "contains"
                | "propertyNames"
                | "contentSchema" => {
                    out.insert(k.to_owned(), sub(self, v));
                }
                "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                    let Value::Array(items) = v else { continue };
                    out.insert(k.to_owned(), Value::Array(items.iter().map(|i| sub(self, i)).collect()));
                }
                "additionalItems" => {}
                _ => {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
        if self.v30 {
            translate_30(map, &mut out);
        }
        self.merge_all_of(&mut out);
        Value::Object(out)
    }

    /// `{"$ref": "#/$defs/<name>"}` for the target of `r`, converting it on first sight.
    fn reference(&mut self, doc: usize, r: &str) -> Value {
        let Some((target, pointer)) = self.docs.resolve(doc, r) else {
            self.unresolved += 1;
            return json!({});
        };
        let key = (target, pointer);
        if let Some(name) = self.names.get(&key) {
            return json!({ "$ref": format!("#/$defs/{name}") });
        }
        let name = self.fresh_name(&key.1);
        let docs = self.docs;
        let Some(value) = docs.get(target, &key.1) else { return json!({}) };
        self.names.insert(key, name.clone());
        self.defs.insert(name.clone(), None);
        let converted = self.convert_at(target, value, 0);
        self.defs.insert(name.clone(), Some(converted));
        json!({ "$ref": format!("#/$defs/{name}") })
    }

    /// A `$defs` name from the pointer's last segment: letters, digits, `.`, `_`, `-`, unique.
    fn fresh_name(&self, pointer: &str) -> String {
        let last = pointer.rsplit('/').next().unwrap_or_default().replace("~1", "/").replace("~0", "~");
        let mut base: String =
            last.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' }).collect();
        if base.is_empty() {
            base = "schema".to_owned();
        }
        let mut name = base.clone();
        let mut n = 2;
        while self.defs.contains_key(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        name
    }

    /// Merges `allOf` into `out` when its members (references followed one level) agree on
    /// every keyword but `properties` and `required`; otherwise leaves it.
    fn merge_all_of(&self, out: &mut Map<String, Value>) {
        let Some(Value::Array(members)) = out.get("allOf") else { return };
        let mut merged = out.clone();
        merged.remove("allOf");
        for m in members {
            let body = match m.get("$ref").and_then(Value::as_str) {
                Some(r) if m.as_object().is_some_and(|o| o.len() == 1) => {
                    let name = r.trim_start_matches("#/$defs/");
                    match self.defs.get(name) {
                        // Converted already (not an enclosing schema of a cycle): inline once.
                        Some(Some(Value::Object(def))) => def,
                        _ => return,
                    }
                }
                _ => match m {
                    Value::Object(o) => o,
                    Value::Bool(true) => continue,
                    _ => return,
                },
            };
            for (k, v) in body {
                match k.as_str() {
                    "properties" => {
                        let Value::Object(props) = v else { return };
                        let into = merged.entry("properties").or_insert_with(|| json!({}));
                        let Some(into) = into.as_object_mut() else { return };
                        for (pk, pv) in props {
                            match into.get_mut(pk) {
                                Some(old) if old != pv => *old = json!({"allOf": [old.clone(), pv.clone()]}),
                                Some(_) => {}
                                None => {
                                    into.insert(pk.clone(), pv.clone());
                                }
                            }
                        }
                    }
                    "required" => {
                        let into = merged.entry("required").or_insert_with(|| json!([]));
                        let (Some(into), Value::Array(req)) = (into.as_array_mut(), v) else { return };
                        for r in req {
                            if !into.contains(r) {
                                into.push(r.clone());
                            }
                        }
                    }
                    "description" | "title" => {
                        merged.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                    _ => match merged.get(k) {
                        Some(existing) if existing != v => return,
                        Some(_) => {}
                        None => {
                            merged.insert(k.clone(), v.clone());
                        }
                    },
                }
            }
        }
        *out = merged;
    }

    /// The final form of def `name` (its `allOf` merged now that every def is converted:
    /// one that named an enclosing def of a cycle could not be merged before) and its size.
    fn final_def(&mut self, name: &str) -> (Value, usize) {
        if let Some(done) = self.finals.get(name) {
            return done.clone();
        }
        let mut def = self.defs.get(name).cloned().flatten().unwrap_or_else(|| json!({}));
        if let Value::Object(m) = &mut def {
            self.merge_all_of(m);
        }
        let size = serde_json::to_vec(&def).map_or(0, |b| b.len());
        self.finals.insert(name.to_owned(), (def.clone(), size));
        (def, size)
    }

    /// The `$defs` `schema` needs, nearest first, while the whole stays within `budget`
    /// bytes; references to defs that did not fit are dropped from `schema` and the defs
    /// (they become unconstrained). Returns the defs and whether any was dropped.
    pub fn defs_within(&mut self, schema: &mut Value, budget: usize) -> (Map<String, Value>, bool) {
        let mut used = serde_json::to_vec(&*schema).map_or(0, |b| b.len());
        let mut out = Map::new();
        let mut frontier = Vec::new();
        refs(schema, &mut frontier);
        let mut left_out = std::collections::HashSet::new();
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for name in frontier {
                if out.contains_key(&name) || left_out.contains(&name) {
                    continue;
                }
                let (def, size) = self.final_def(&name);
                if used + size > budget {
                    left_out.insert(name);
                    continue;
                }
                used += size;
                refs(&def, &mut next);
                out.insert(name, def);
            }
            frontier = next;
        }
        if left_out.is_empty() {
            return (out, false);
        }
        unref(schema, &left_out);
        for def in out.values_mut() {
            unref(def, &left_out);
        }
        (out, true)
    }
}

/// Removes `$ref`s to `names` (what remains of each schema still applies).
fn unref(v: &mut Value, names: &std::collections::HashSet<String>) {
    match v {
        Value::Object(map) => {
            let gone = map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/$defs/"))
                .is_some_and(|n| names.contains(n));
            if gone {
                map.remove("$ref");
            }
            map.values_mut().for_each(|v| unref(v, names));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| unref(v, names)),
        _ => {}
    }
}

/// The `$defs` names a schema refers to.
fn refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            if let Some(name) = map.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) {
                out.push(name.to_owned());
            }
            map.values().for_each(|v| refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

/// OpenAPI 3.0 keywords whose 2020-12 meaning differs.
fn translate_30(original: &Map<String, Value>, out: &mut Map<String, Value>) {
    for (flag, bound) in [("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")] {
        if let Some(Value::Bool(b)) = original.get(flag) {
            out.remove(flag);
            if *b && let Some(limit) = out.remove(bound) {
                out.insert(flag.to_owned(), limit);
            }
        }
    }
    if original.get("nullable") == Some(&Value::Bool(true)) {
        match out.get_mut("type") {
            Some(Value::String(t)) => {
                let t = t.clone();
                out.insert("type".to_owned(), json!([t, "null"]));
            }
            Some(Value::Array(types)) if !types.contains(&json!("null")) => types.push(json!("null")),
            _ => {}
        }
        if let Some(Value::Array(values)) = out.get_mut("enum")
            && !values.contains(&Value::Null)
        {
            values.push(Value::Null);
        }
    }
}

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

    fn docs(v: Value) -> Documents {
        Documents::from_value(url::Url::parse("file:///api.json").unwrap(), v)
    }

    #[test]
    fn recursion_stays_a_reference() {
        let d = docs(json!({"components": {"schemas": {
            "Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}}}
        }}}));
        let mut s = Schemas::new(&d, false);
        let mut root = s.convert(0, &json!({"$ref": "#/components/schemas/Node"}));
        assert_eq!(root, json!({"$ref": "#/$defs/Node"}));
        let (defs, cut) = s.defs_within(&mut root, usize::MAX);
        assert!(!cut);
        assert_eq!(defs["Node"]["properties"]["children"]["items"], json!({"$ref": "#/$defs/Node"}));
    }

    #[test]
    fn all_of_merges_and_one_of_keeps_its_tags_required() {
        let d = docs(json!({"components": {"schemas": {
            "Base": {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}},
            "Cat": {"type": "object", "required": ["kind"], "properties": {"kind": {"const": "cat"}}},
            "Dog": {"type": "object", "required": ["kind"], "properties": {"kind": {"const": "dog"}}},
        }}}));
        let mut s = Schemas::new(&d, false);
        let merged = s.convert(
            0,
            &json!({"allOf": [{"$ref": "#/components/schemas/Base"}, {"properties": {"name": {"type": "string"}}, "required": ["name"]}]}),
        );
        assert_eq!(merged["required"], json!(["id", "name"]));
        assert_eq!(merged["properties"]["id"]["type"], "integer");
        assert!(merged.get("allOf").is_none());
        let pet = s.convert(
            0,
            &json!({"oneOf": [{"$ref": "#/components/schemas/Cat"}, {"$ref": "#/components/schemas/Dog"}],
                    "discriminator": {"propertyName": "kind"}}),
        );
        assert_eq!(pet["discriminator"]["propertyName"], "kind");
        assert_eq!(s.defs_within(&mut pet.clone(), usize::MAX).0["Cat"]["required"], json!(["kind"]));
        // Over the budget: the far defs are dropped, and so are the references to them.
        let mut small = pet;
        let (defs, cut) = s.defs_within(&mut small, 10);
        assert!(cut && defs.is_empty());
        assert_eq!(small["oneOf"], json!([{}, {}]));
        let conflict = s.convert(0, &json!({"allOf": [{"type": "string"}, {"type": "integer"}]}));
        assert!(conflict.get("allOf").is_some());
    }

    #[test]
    fn openapi_30_dialect_is_translated() {
        let d = docs(json!({}));
        let mut s = Schemas::new(&d, true);
        let v = s.convert(
            0,
            &json!({"type": "integer", "nullable": true, "minimum": 1, "exclusiveMinimum": true, "x-foo": 1, "example": 3}),
        );
        assert_eq!(v, json!({"type": ["integer", "null"], "exclusiveMinimum": 1}));
        assert_eq!(s.convert(0, &json!({"$ref": "#/nowhere"})), json!({}));
        assert_eq!(s.unresolved, 1);
    }

    #[test]
    fn invalid_keywords_are_dropped_until_valid() {
        let mut v = json!({"type": "object", "properties": {"f": {"type": "file", "required": true, "minLength": -1}}});
        assert_eq!(make_valid(&mut v).unwrap(), 3);
        assert_eq!(v, json!({"type": "object", "properties": {"f": {}}}));
        assert!(make_valid(&mut json!([1])).is_err());
    }
}
