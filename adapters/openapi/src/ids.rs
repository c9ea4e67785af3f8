//! Schema identification as OpenAPI 3.1 takes it from JSON Schema 2020-12 (OpenAPI 3.1.0
//! § 4.6 Relative References in URIs: in a Schema Object, the nearest parent `$id` is the base
//! URI): `$id` sets the base URI of a schema and its subschemas (JSON Schema 2020-12 Core
//! § 8.2.1), `$anchor` names a schema by a plain-name fragment (§ 8.2.2), and a `$ref`
//! resolves against the base URI where it is written (§ 8.2.3.1).

use std::collections::HashMap;

use serde_json::Value;
use url::Url;

/// Every `$id` and `$anchor` of the documents read, by absolute URI.
#[derive(Debug, Clone, Default)]
pub struct Identifiers {
    /// Schema resources by their `$id` (absolute, without fragment): document and pointer.
    resources: HashMap<Url, (usize, String)>,
    /// Plain-name fragments by the resource they belong to, then by name.
    anchors: HashMap<Url, HashMap<String, (usize, String)>>,
}

/// A document's `$ref`s with the base URI each is written under.
#[derive(Debug)]
pub struct Scan<'v> {
    /// Base URIs: the document's own URL first, then each `$id` met.
    pub bases: Vec<Url>,
    /// Each `$ref` (an index into `bases`, the text).
    pub refs: Vec<(usize, &'v str)>,
}

/// The base URI `$id` sets under `base`: the reference resolved, without its fragment
/// (an `$id` carries none, § 8.2.1). `None` for an `$id` that is only a fragment (draft-07's
/// anchors) or not a URI reference.
pub fn join_id(base: &Url, id: &str) -> Option<Url> {
    if id.starts_with('#') {
        return None;
    }
    let mut url = base.join(id).ok()?;
    url.set_fragment(None);
    Some(url)
}

/// One step of a JSON pointer while walking.
#[derive(Clone, Copy)]
enum Step<'v> {
    Key(&'v str),
    Index(usize),
}

fn pointer(path: &[Step<'_>]) -> String {
    let mut out = String::new();
    for step in path {
        out.push('/');
        match step {
            Step::Key(k) => out.push_str(&k.replace('~', "~0").replace('/', "~1")),
            Step::Index(i) => out.push_str(&i.to_string()),
        }
    }
    out
}

impl Identifiers {
    /// Records the `$id`s and `$anchor`s of document `doc` (read from `url`) and returns its
    /// `$ref`s, each with its base. The first declaration of an identifier wins.
    pub fn scan<'v>(&mut self, doc: usize, url: &Url, value: &'v Value) -> Scan<'v> {
        let mut scan = Scan { bases: vec![url.clone()], refs: Vec::new() };
        let mut path = Vec::new();
        self.walk(doc, value, 0, &mut scan, &mut path);
        scan
    }

    fn walk<'v>(&mut self, doc: usize, v: &'v Value, base: usize, scan: &mut Scan<'v>, path: &mut Vec<Step<'v>>) {
        match v {
            Value::Object(map) => {
                let mut base = base;
                if let Some(Value::String(id)) = map.get("$id") {
                    match join_id(&scan.bases[base], id) {
                        Some(url) => {
                            self.resources.entry(url.clone()).or_insert_with(|| (doc, pointer(path)));
                            scan.bases.push(url);
                            base = scan.bases.len() - 1;
                        }
                        None => self.anchor(&scan.bases[base], id.trim_start_matches('#'), doc, path),
                    }
                }
                for key in ["$anchor", "$dynamicAnchor"] {
                    if let Some(Value::String(name)) = map.get(key) {
                        self.anchor(&scan.bases[base], name, doc, path);
                    }
                }
                if let Some(Value::String(r)) = map.get("$ref") {
                    scan.refs.push((base, r));
                }
                for (k, v) in map {
                    path.push(Step::Key(k));
                    self.walk(doc, v, base, scan, path);
                    path.pop();
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    path.push(Step::Index(i));
                    self.walk(doc, v, base, scan, path);
                    path.pop();
                }
            }
            _ => {}
        }
    }

    fn anchor(&mut self, base: &Url, name: &str, doc: usize, path: &[Step<'_>]) {
        if name.is_empty() {
            return;
        }
        let names = self.anchors.entry(base.clone()).or_default();
        names.entry(name.to_owned()).or_insert_with(|| (doc, pointer(path)));
    }

    /// The document and pointer of the schema whose `$id` is `url`.
    pub fn resource(&self, url: &Url) -> Option<&(usize, String)> {
        self.resources.get(url)
    }

    /// The document and pointer of the schema of resource `url` with `$anchor` `name`.
    pub fn anchor_in(&self, url: &Url, name: &str) -> Option<&(usize, String)> {
        self.anchors.get(url)?.get(name)
    }
}

/// The base URI in force at `pointer` in `doc` (whose URL is `url`), from the `$id`s of the
/// schemas enclosing it; the `$id` of the value at `pointer` itself is not applied.
pub fn base_at(url: &Url, doc: &Value, pointer: &str) -> Url {
    let mut base = url.clone();
    let mut at = doc;
    for token in pointer.split('/').skip(1) {
        if let Some(id) = at.get("$id").and_then(Value::as_str)
            && let Some(b) = join_id(&base, id)
        {
            base = b;
        }
        let token = token.replace("~1", "/").replace("~0", "~");
        let next = match at {
            Value::Object(map) => map.get(&token),
            Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        };
        let Some(next) = next else { break };
        at = next;
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_set_bases_and_anchors_belong_to_their_resource() {
        let url = Url::parse("file:///api/openapi.json").unwrap();
        let doc = json!({"components": {"schemas": {
            "Pet": {"$id": "/components/schemas/pet", "properties": {
                "details": {"$anchor": "details", "type": "string"},
                "tag": {"$ref": "tag.json"},
                "a/b": {"$id": "https://example.com/a/b", "$anchor": "ab"}
            }},
            "Local": {"$anchor": "local"},
            "Named": {"properties": {"$id": {"type": "string"}}}
        }}});
        let mut ids = Identifiers::default();
        let scan = ids.scan(0, &url, &doc);
        let pet = Url::parse("file:///components/schemas/pet").unwrap();
        assert_eq!(ids.resource(&pet), Some(&(0, "/components/schemas/Pet".to_owned())));
        assert_eq!(ids.anchor_in(&pet, "details").unwrap().1, "/components/schemas/Pet/properties/details");
        let ab = Url::parse("https://example.com/a/b").unwrap();
        assert_eq!(ids.anchor_in(&ab, "ab").unwrap().1, "/components/schemas/Pet/properties/a~1b");
        assert_eq!(ids.anchor_in(&url, "local").unwrap().1, "/components/schemas/Local");
        // A property named `$id` is not an identifier.
        assert_eq!(ids.resources.len(), 2);
        let (base, r) = scan.refs[0];
        assert_eq!((scan.bases[base].as_str(), r), ("file:///components/schemas/pet", "tag.json"));
        assert_eq!(base_at(&url, &doc, "/components/schemas/Pet/properties/tag"), pet);
        assert_eq!(base_at(&url, &doc, "/components/schemas/Pet"), url);
    }
}
