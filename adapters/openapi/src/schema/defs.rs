//! The `$defs` an input schema takes along (nearest first, within `max_schema_bytes`), and
//! whether any `$ref` it reaches points nowhere.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::Schemas;

impl Schemas<'_> {
    /// Forgets the `$ref`s met outside defs that point nowhere (a new operation starts).
    pub fn forget_unresolved(&mut self) {
        self.pending.clear();
    }

    /// Why a `$ref` in `schema` (converted since the last call) or in a def it reaches,
    /// however far, points nowhere; forgets the `$ref`s met outside defs.
    pub fn take_unresolved(&mut self, schema: &Value) -> Option<String> {
        if let Some(why) = self.pending.drain(..).next() {
            return Some(why);
        }
        if self.broken.is_empty() {
            return None;
        }
        let mut seen = HashSet::new();
        let mut frontier = Vec::new();
        refs(schema, &mut frontier);
        while let Some(name) = frontier.pop() {
            if let Some(why) = self.broken.get(&name) {
                return Some(why.clone());
            }
            if seen.insert(name.clone())
                && let Some(Some(def)) = self.defs.get(&name)
            {
                refs(def, &mut frontier);
            }
        }
        None
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
        let mut left_out = HashSet::new();
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
fn unref(v: &mut Value, names: &HashSet<String>) {
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
