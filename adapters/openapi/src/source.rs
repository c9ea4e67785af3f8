//! Reading the document and the files its `$ref`s name: a file path or an `http(s)://` URL,
//! JSON or YAML, each kept as a `serde_json::Value` under its URL. References resolve against
//! the URL of the document they appear in (OpenAPI 3.1 § 4.3 Relative References in URIs).

use std::time::Duration;

use serde_json::{Map, Number, Value};
use url::Url;

/// Largest document read (the biggest real-world specs are tens of MB).
const MAX_BYTES: usize = 64 * 1024 * 1024;
/// Most documents one import reads (the root and the files it references).
const MAX_DOCUMENTS: usize = 64;
/// Upper bound for fetching one document over HTTP.
const FETCH_TIMEOUT: Duration = Duration::from_secs(30);

/// The root document (index 0) and every document reachable through `$ref`.
#[derive(Debug, Clone)]
pub struct Documents {
    docs: Vec<(Url, Value)>,
}

impl Documents {
    /// A single, already parsed document (tests, the corpus run).
    pub fn from_value(url: Url, value: Value) -> Self {
        Self { docs: vec![(url, value)] }
    }

    /// Reads `spec` (a path or URL) and, transitively, the documents its `$ref`s name on the
    /// same origin (sibling files). Errors say what to fix.
    pub async fn load(spec: &str) -> Result<Self, String> {
        let root = location(spec)?;
        let client = client()?;
        let value = read(&client, &root).await?;
        let mut docs = Self { docs: vec![(root, value)] };
        let mut next = 0;
        while next < docs.docs.len() {
            let (base, value) = &docs.docs[next];
            let mut refs = Vec::new();
            collect_refs(value, &mut refs);
            let mut wanted: Vec<Url> = Vec::new();
            for r in refs {
                let Some(doc) = r.split('#').next().filter(|d| !d.is_empty()) else { continue };
                let Ok(url) = base.join(doc) else { continue };
                if same_origin(&url, &docs.docs[0].0) && docs.index(&url).is_none() && !wanted.contains(&url) {
                    wanted.push(url);
                }
            }
            for url in wanted {
                if docs.docs.len() >= MAX_DOCUMENTS {
                    return Err(format!("more than {MAX_DOCUMENTS} documents referenced"));
                }
                let value = read(&client, &url).await?;
                docs.docs.push((url, value));
            }
            next += 1;
        }
        Ok(docs)
    }

    /// The root document.
    pub fn root(&self) -> &Value {
        &self.docs[0].1
    }

    /// The root document's URL.
    pub fn root_url(&self) -> &Url {
        &self.docs[0].0
    }

    fn index(&self, url: &Url) -> Option<usize> {
        self.docs.iter().position(|(u, _)| u == url)
    }

    /// Where `reference` (as written in document `from`) points: a document and a JSON pointer.
    pub fn resolve(&self, from: usize, reference: &str) -> Option<(usize, String)> {
        let (doc, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        let target = if doc.is_empty() {
            from
        } else {
            let mut url = self.docs[from].0.join(doc).ok()?;
            url.set_fragment(None);
            self.index(&url)?
        };
        let pointer = percent_decode(fragment);
        self.docs[target].1.pointer(&pointer)?;
        Some((target, pointer))
    }

    /// The value at `pointer` in document `doc`.
    pub fn get(&self, doc: usize, pointer: &str) -> Option<&Value> {
        self.docs.get(doc)?.1.pointer(pointer)
    }
}

/// A path or URL as a URL.
fn location(spec: &str) -> Result<Url, String> {
    if spec.starts_with("http://") || spec.starts_with("https://") {
        return Url::parse(spec).map_err(|e| format!("'{spec}' is not a URL: {e}"));
    }
    let path = std::fs::canonicalize(spec).map_err(|e| format!("cannot read '{spec}': {e}"))?;
    Url::from_file_path(&path).map_err(|()| format!("'{spec}' is not an absolute path"))
}

fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme() && a.host_str() == b.host_str() && a.port_or_known_default() == b.port_or_known_default()
}

fn client() -> Result<reqwest::Client, String> {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    reqwest::Client::builder()
        .timeout(FETCH_TIMEOUT)
        .no_proxy()
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

async fn read(client: &reqwest::Client, url: &Url) -> Result<Value, String> {
    let bytes = match url.scheme() {
        "file" => {
            let path = url.to_file_path().map_err(|()| format!("{url} is not a file path"))?;
            let len =
                tokio::fs::metadata(&path).await.map_err(|e| format!("cannot read {}: {e}", path.display()))?.len();
            if len > MAX_BYTES as u64 {
                return Err(format!("{} is larger than {MAX_BYTES} bytes", path.display()));
            }
            tokio::fs::read(&path).await.map_err(|e| format!("cannot read {}: {e}", path.display()))?
        }
        _ => {
            let mut response = client.get(url.clone()).send().await.map_err(|e| format!("cannot fetch {url}: {e}"))?;
            if !response.status().is_success() {
                return Err(format!("fetching {url} answered HTTP {}", response.status()));
            }
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(|e| format!("cannot fetch {url}: {e}"))? {
                if body.len() + chunk.len() > MAX_BYTES {
                    return Err(format!("{url} is larger than {MAX_BYTES} bytes"));
                }
                body.extend_from_slice(&chunk);
            }
            body
        }
    };
    parse(&bytes).map_err(|e| format!("{url}: {e}"))
}

/// JSON when the text starts with `{` or `[`, YAML otherwise (YAML 1.2 is a superset of JSON,
/// but the JSON parser is much faster on the large JSON specs).
pub fn parse(bytes: &[u8]) -> Result<Value, String> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if matches!(first, Some(b'{' | b'[')) {
        return serde_json::from_slice(bytes).map_err(|e| format!("not valid JSON: {e}"));
    }
    let yaml: serde_norway::Value = serde_norway::from_slice(bytes).map_err(|e| format!("not valid YAML: {e}"))?;
    Ok(from_yaml(yaml))
}

/// YAML allows keys of any type (`200:` is an integer): JSON keys are their text.
fn from_yaml(v: serde_norway::Value) -> Value {
    use serde_norway::Value as Y;
    match v {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                n.as_f64().and_then(Number::from_f64).map_or(Value::Null, Value::Number)
            }
        }
        Y::String(s) => Value::String(s),
        Y::Sequence(items) => Value::Array(items.into_iter().map(from_yaml).collect()),
        Y::Mapping(map) => {
            let mut out = Map::with_capacity(map.len());
            for (k, v) in map {
                let key = match k {
                    Y::String(s) => s,
                    Y::Bool(b) => b.to_string(),
                    Y::Number(n) => n.to_string(),
                    Y::Null => "null".to_owned(),
                    other => serde_norway::to_string(&other).unwrap_or_default().trim().to_owned(),
                };
                out.insert(key, from_yaml(v));
            }
            Value::Object(out)
        }
        Y::Tagged(t) => from_yaml(t.value),
    }
}

fn collect_refs<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref") {
                out.push(r);
            }
            map.values().for_each(|v| collect_refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

/// A URI fragment's percent-escapes (`#/paths/~1pets%7Bid%7D`) decoded into a JSON pointer.
fn percent_decode(fragment: &str) -> String {
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(h) = fragment.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(h);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_keys_become_text_and_json_stays_json() {
        let v = parse(
            b"openapi: 3.0.3\npaths:\n  /x:\n    get:\n      responses:\n        200:\n          description: ok\n",
        )
        .unwrap();
        assert_eq!(v["paths"]["/x"]["get"]["responses"]["200"]["description"], "ok");
        assert_eq!(parse(b" {\"a\": 1}").unwrap()["a"], 1);
        assert!(parse(b"{nope").unwrap_err().contains("JSON"));
        assert!(parse(b"a: [unclosed").unwrap_err().contains("YAML"));
    }

    #[tokio::test]
    async fn sibling_files_are_read_and_resolved() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("api.yaml"), "openapi: 3.1.0\nx: {$ref: 'parts/pet.yaml#/Pet'}\n").unwrap();
        std::fs::create_dir(dir.path().join("parts")).unwrap();
        std::fs::write(dir.path().join("parts/pet.yaml"), "Pet: {type: object}\n").unwrap();
        let docs = Documents::load(dir.path().join("api.yaml").to_str().unwrap()).await.unwrap();
        let (doc, pointer) = docs.resolve(0, "parts/pet.yaml#/Pet").unwrap();
        assert_eq!(docs.get(doc, &pointer).unwrap()["type"], "object");
        assert!(docs.resolve(0, "#/nope").is_none());
        let e = Documents::load(dir.path().join("missing.yaml").to_str().unwrap()).await.unwrap_err();
        assert!(e.contains("cannot read"), "{e}");
    }
}
