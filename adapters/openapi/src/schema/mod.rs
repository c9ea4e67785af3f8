//! OpenAPI schemas as JSON Schema 2020-12 (the dialect of MCP input schemas, MCP 2026-07-28
//! basic § JSON Schema usage):
//!
//! - every `$ref` (within the document, to a sibling file, to a `$id` or an `$anchor`)
//!   becomes `#/$defs/<name>`, each target converted once: recursive schemas stay
//!   references, never inlined without end; one that resolves nowhere leaves its operation
//!   out, with the reason ([`Schemas::take_unresolved`]);
//! - `allOf` members are merged into one object schema when they do not conflict (a
//!   conflicting member keeps the `allOf`); `oneOf`/`anyOf` stay as they are, so a required
//!   tag stays required, except that a `discriminator` picks the branch ([`discriminator`]);
//! - OpenAPI 3.0's dialect is translated: `nullable`, boolean `exclusiveMinimum/Maximum`,
//!   tuple `items`; `x-*`, `xml`, `example` and other annotations a model does not need are
//!   dropped;
//! - [`make_valid`] finally drops whatever keyword still breaks the 2020-12 metaschema (real
//!   documents have `type: file`, `required: true` on properties, negative lengths, ...);
//! - `defs`: the `$defs` one input schema takes along, within `max_schema_bytes`.

mod defs;
mod discriminator;
mod valid;

use std::collections::HashMap;

use serde_json::{Map, Value, json};
use url::Url;

pub use valid::make_valid;

use crate::ids::join_id;
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
    /// `$ref`s that point nowhere.
    pub unresolved: usize,
    /// Why `$ref`s met since the last [`Self::take_unresolved`], outside any def, point nowhere.
    pending: Vec<String>,
    /// Defs with a `$ref` in them that points nowhere, and why.
    broken: HashMap<String, String>,
    /// The defs being converted that declare `$recursiveAnchor: true` (anchor "") or a
    /// `$dynamicAnchor`, innermost last: where `$recursiveRef`/`$dynamicRef` lead.
    anchors: Vec<(String, String)>,
}

impl<'d> Schemas<'d> {
    /// `v30`: the document is OpenAPI 3.0 (its schema dialect is translated).
    pub fn new(docs: &'d Documents, v30: bool) -> Self {
        Self {
            docs,
            v30,
            defs: HashMap::new(),
            names: HashMap::new(),
            finals: HashMap::new(),
            unresolved: 0,
            pending: Vec::new(),
            broken: HashMap::new(),
            anchors: Vec::new(),
        }
    }

    /// The documents.
    pub fn docs(&self) -> &'d Documents {
        self.docs
    }

    /// Follows `$ref`s of a non-schema object (a parameter, a request body) to the object,
    /// or says why one points nowhere.
    pub fn deref<'v>(&self, mut doc: usize, mut v: &'v Value) -> Result<(usize, &'v Value), String>
    where
        'd: 'v,
    {
        for _ in 0..16 {
            let Some(r) = v.get("$ref").and_then(Value::as_str) else { return Ok((doc, v)) };
            let (d, pointer) = self.docs.resolve(doc, r)?;
            doc = d;
            v = self.docs.get(d, &pointer).ok_or_else(|| format!("$ref '{r}' cannot be resolved"))?;
        }
        Err("a chain of more than 16 $refs".to_owned())
    }

    /// The schema `s` (found in document `doc`, outside any `$id`) in 2020-12.
    pub fn convert(&mut self, doc: usize, s: &Value) -> Value {
        let docs = self.docs;
        self.convert_at(doc, docs.url(doc), s, 0)
    }

    /// `base`: the base URI in force where `s` is (the document's URL, or an enclosing `$id`).
    fn convert_at(&mut self, doc: usize, base: &Url, s: &Value, depth: usize) -> Value {
        let Value::Object(map) = s else {
            return if s.is_boolean() { s.clone() } else { json!({}) };
        };
        if depth > MAX_DEPTH {
            return json!({});
        }
        // `$id` moves the base URI of this schema, its `$ref` included (JSON Schema 2020-12
        // Core § 8.2.1).
        let own = map.get("$id").and_then(Value::as_str).and_then(|id| join_id(base, id));
        let base = own.as_ref().unwrap_or(base);
        if let Some(Value::String(r)) = map.get("$ref") {
            let target = self.reference(doc, base, r);
            // 3.0: siblings of `$ref` are ignored; 3.1 (2020-12): they apply beside it.
            if self.v30 || map.len() == 1 || target.get("$ref").is_none() {
                return target;
            }
            let mut rest = map.clone();
            rest.remove("$ref");
            let mut out = self.convert_object(doc, base, &rest, depth);
            if let Value::Object(o) = &mut out {
                o.insert("$ref".to_owned(), target["$ref"].clone());
            }
            return out;
        }
        self.convert_object(doc, base, map, depth)
    }

    fn convert_object(&mut self, doc: usize, base: &Url, map: &Map<String, Value>, depth: usize) -> Value {
        let mut out = Map::with_capacity(map.len());
        let sub = |this: &mut Self, v: &Value| this.convert_at(doc, base, v, depth + 1);
        for (k, v) in map {
            match k.as_str() {
                k if k.starts_with("x-") => {}
                // Annotations a model does not need, and keywords that would move the base URI
                // or shadow our `$defs` (references into them are hoisted like any other).
                "xml" | "externalDocs" | "example" | "examples" | "$schema" | "$id" | "$anchor" | "$dynamicAnchor"
                | "$comment" | "$defs" | "definitions" | "id" | "nullable" | "$recursiveAnchor" => {}
                // Recursion by dynamic scope (2020-12 `$dynamicRef: "#a"`, 2019-09
                // `$recursiveRef: "#"`, which vendors' 3.1 documents use): our defs are shared,
                // so it becomes a `$ref` to the innermost def being converted that declares
                // the anchor, the static resolution.
                "$recursiveRef" | "$dynamicRef" => {
                    let wanted = match (k.as_str(), v.as_str()) {
                        ("$recursiveRef", Some("#")) => Some(""),
                        ("$dynamicRef", Some(r)) => r.strip_prefix('#'),
                        _ => None,
                    };
                    let def = wanted.and_then(|a| self.anchors.iter().rev().find(|(x, _)| x == a));
                    if let Some((_, name)) = def {
                        out.insert("$ref".to_owned(), json!(format!("#/$defs/{name}")));
                    }
                }
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
        // Boolean bounds are 3.0's, but 3.1 documents carry them too (OpenAI's).
        exclusive_bounds(map, &mut out);
        if self.v30 {
            translate_30(map, &mut out);
        }
        self.merge_all_of(&mut out);
        discriminator::rewrite(map, &mut out);
        Value::Object(out)
    }

    /// `{"$ref": "#/$defs/<name>"}` for the target of `r`, converting it on first sight;
    /// `{}` when it points nowhere (and why is kept for [`Self::take_unresolved`]).
    fn reference(&mut self, doc: usize, base: &Url, r: &str) -> Value {
        let (target, pointer) = match self.docs.resolve_in(doc, base, r) {
            Ok(found) => found,
            Err(why) => {
                self.unresolved += 1;
                self.pending.push(why);
                return json!({});
            }
        };
        let key = (target, pointer);
        if let Some(name) = self.names.get(&key) {
            // A def merged into an `allOf` leaves no reference behind to find it by later.
            if let Some(why) = self.broken.get(name) {
                self.pending.push(why.clone());
            }
            return json!({ "$ref": format!("#/$defs/{name}") });
        }
        let name = self.fresh_name(&key.1);
        let docs = self.docs;
        let Some(value) = docs.get(target, &key.1) else { return json!({}) };
        let target_base = docs.base_at(target, &key.1);
        self.names.insert(key, name.clone());
        self.defs.insert(name.clone(), None);
        let outer = std::mem::take(&mut self.pending);
        let anchor = match (value.get("$recursiveAnchor"), value.get("$dynamicAnchor")) {
            (Some(Value::Bool(true)), _) => Some(String::new()),
            (_, Some(Value::String(a))) => Some(a.clone()),
            _ => None,
        };
        let anchored = anchor.map(|a| self.anchors.push((a, name.clone()))).is_some();
        let converted = self.convert_at(target, &target_base, value, 0);
        if anchored {
            self.anchors.pop();
        }
        if let Some(why) = std::mem::replace(&mut self.pending, outer).into_iter().next() {
            self.broken.insert(name.clone(), why.clone());
            self.pending.push(why);
        }
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
}

/// OpenAPI 3.0 keywords whose 2020-12 meaning differs.
/// `exclusiveMinimum: true` beside `minimum: 0` is `exclusiveMinimum: 0` (a boolean flag is
/// never valid 2020-12).
fn exclusive_bounds(original: &Map<String, Value>, out: &mut Map<String, Value>) {
    for (flag, bound) in [("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")] {
        if let Some(Value::Bool(b)) = original.get(flag) {
            out.remove(flag);
            if *b && let Some(limit) = out.remove(bound) {
                out.insert(flag.to_owned(), limit);
            }
        }
    }
}

fn translate_30(original: &Map<String, Value>, out: &mut Map<String, Value>) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(v: Value) -> Documents {
        Documents::from_value(Url::parse("file:///api.json").unwrap(), v)
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
        // The discriminator picks the branch: one `if`/`then` per branch (discriminator.rs).
        assert_eq!(small["allOf"][1]["if"]["properties"]["kind"]["const"], "Cat");
        assert_eq!((&small["allOf"][1]["then"], &small["allOf"][2]["then"]), (&json!({}), &json!({})));
        let conflict = s.convert(0, &json!({"allOf": [{"type": "string"}, {"type": "integer"}]}));
        assert!(conflict.get("allOf").is_some());
    }

    #[test]
    fn recursive_and_dynamic_refs_become_refs_to_their_anchor() {
        let d = docs(json!({"openapi": "3.1.0", "components": {"schemas": {
            "Compound": {"$recursiveAnchor": true, "type": "object", "properties": {"filters": {"type": "array",
                "items": {"oneOf": [{"$ref": "#/components/schemas/Leaf"}, {"$recursiveRef": "#"}]}}}},
            "Leaf": {"type": "object", "required": ["key"], "properties": {"key": {"type": "string"}}},
            "Tree": {"$dynamicAnchor": "node", "type": "object", "properties": {"kids": {"type": "array", "items": {"$dynamicRef": "#node"}}}}
        }}}));
        let mut s = Schemas::new(&d, false);
        assert_eq!(
            s.convert(0, &json!({"$ref": "#/components/schemas/Compound"})),
            json!({"$ref": "#/$defs/Compound"})
        );
        assert_eq!(s.convert(0, &json!({"$ref": "#/components/schemas/Tree"})), json!({"$ref": "#/$defs/Tree"}));
        let defs = s.defs.clone();
        let compound = defs["Compound"].as_ref().unwrap();
        assert_eq!(compound["properties"]["filters"]["items"]["oneOf"][1], json!({"$ref": "#/$defs/Compound"}));
        assert!(compound.get("$recursiveAnchor").is_none());
        let tree = defs["Tree"].as_ref().unwrap();
        assert_eq!(tree["properties"]["kids"]["items"], json!({"$ref": "#/$defs/Tree"}));
        let bound = s.convert(0, &json!({"type": "number", "minimum": 0, "exclusiveMinimum": true}));
        assert_eq!(bound, json!({"type": "number", "exclusiveMinimum": 0}));
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
}
