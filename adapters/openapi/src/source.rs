//! Reading the document and the files its `$ref`s name: a file path or an `http(s)://` URL,
//! JSON or YAML, each kept as a `serde_json::Value` under its URL. References resolve against
//! the base URI where they are written: the URL of their document (OpenAPI 3.1.0 § 4.6
//! Relative References in URIs), or the `$id` of an enclosing schema ([`crate::ids`]).
//!
//! Any number of files may be referenced; what bounds a load is the bytes of all of them
//! together (`max_spec_bytes`). A referenced file that cannot be read does not refuse the
//! document: the operations that need it are left out, with the reason.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use futures_util::{StreamExt as _, stream};
use serde_json::Value;
use url::Url;

use crate::ids::{self, Identifiers};
pub use crate::yaml::parse;

/// Default of `max_spec_bytes`: the document and every file it references, in total. The
/// largest real-world single documents are tens of MB; multi-file layouts of thousands of
/// files stay far below this.
pub const DEFAULT_MAX_BYTES: usize = 256 * 1024 * 1024;
/// Files of one level of references read at once (a layout of thousands of files over HTTP
/// is not read one round trip after the other).
const CONCURRENT_READS: usize = 16;
/// Upper bound for fetching one document over HTTP.
const FETCH_TIMEOUT: Duration = Duration::from_secs(30);

/// The root document (index 0) and every document reachable through `$ref`.
#[derive(Debug, Clone)]
pub struct Documents {
    docs: Vec<(Url, Value)>,
    by_url: HashMap<Url, usize>,
    ids: Identifiers,
    /// Referenced files that could not be read, and why.
    unreadable: HashMap<Url, String>,
}

/// Why a read failed: over the total bound (the whole load fails), or this file only.
enum ReadError {
    TooLarge(String),
    Failed(String),
}

impl Documents {
    fn empty() -> Self {
        Self { docs: Vec::new(), by_url: HashMap::new(), ids: Identifiers::default(), unreadable: HashMap::new() }
    }

    /// A single, already parsed document (tests, the corpus run).
    pub fn from_value(url: Url, value: Value) -> Self {
        let mut docs = Self::empty();
        docs.push(url, value);
        docs
    }

    /// Adds a document; returns the same-origin files its `$ref`s name that are not known yet.
    fn push(&mut self, url: Url, value: Value) -> Vec<Url> {
        let doc = self.docs.len();
        let scan = self.ids.scan(doc, &url, &value);
        let root = self.docs.first().map_or(&url, |(u, _)| u);
        let mut wanted = Vec::new();
        let mut seen = HashSet::new();
        for (base, r) in &scan.refs {
            let Some(file) = r.split('#').next().filter(|d| !d.is_empty()) else { continue };
            let known = |t: &Url| {
                self.by_url.contains_key(t) || self.ids.resource(t).is_some() || self.unreadable.contains_key(t)
            };
            let Some(mut target) = ids::join_id(&scan.bases[*base], file) else { continue };
            // Under an `$id` on another origin, the file as written beside this one (layouts
            // whose `$id`s are names, not where the files are; see `resolve_in`).
            if !known(&target) && !same_origin(&target, root) && *base != 0 {
                let Some(beside) = ids::join_id(&scan.bases[0], file) else { continue };
                target = beside;
            }
            if !known(&target) && same_origin(&target, root) && seen.insert(target.clone()) {
                wanted.push(target);
            }
        }
        drop(scan);
        self.by_url.insert(url.clone(), doc);
        self.docs.push((url, value));
        wanted
    }

    /// Reads `spec` (a path or URL) and, transitively, the documents its `$ref`s name on the
    /// same origin (sibling files), at most `max_bytes` in all. Errors say what to fix.
    ///
    /// Breadth first, one level of references at a time: the files of a level are read
    /// `CONCURRENT_READS` at a time and added in the order they were named, so the result
    /// does not depend on which read finishes first.
    pub async fn load(spec: &str, max_bytes: usize) -> Result<Self, String> {
        let root = location(spec)?;
        let client = client()?;
        let mut budget = Budget { max: max_bytes, used: 0 };
        let (value, len) =
            read(&client, &root, &budget).await.map_err(|(ReadError::TooLarge(e) | ReadError::Failed(e))| e)?;
        budget.used += len;
        let mut docs = Self::empty();
        let mut level = docs.push(root, value);
        while !level.is_empty() {
            let mut seen = HashSet::new();
            // Named by a `$id` read since, or by two files of the level.
            level.retain(|u| !docs.by_url.contains_key(u) && docs.ids.resource(u).is_none() && seen.insert(u.clone()));
            let (client, budget_now) = (&client, &budget);
            let reads: Vec<_> = stream::iter(level)
                .map(|url| async move {
                    let read = read(client, &url, budget_now).await;
                    (url, read)
                })
                .buffered(CONCURRENT_READS)
                .collect()
                .await;
            let mut next = Vec::new();
            for (url, read) in reads {
                match read {
                    Ok((value, len)) => {
                        budget.used += len;
                        if budget.used > budget.max {
                            return Err(budget.too_large(&url));
                        }
                        next.extend(docs.push(url, value));
                    }
                    Err(ReadError::TooLarge(e)) => return Err(e),
                    Err(ReadError::Failed(e)) => {
                        docs.unreadable.insert(url, e);
                    }
                }
            }
            level = next;
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

    /// The URL document `doc` was read from.
    pub fn url(&self, doc: usize) -> &Url {
        &self.docs[doc].0
    }

    /// Where `reference` (written in document `from`, outside any `$id`) points: a document
    /// and a JSON pointer, or why it points nowhere.
    pub fn resolve(&self, from: usize, reference: &str) -> Result<(usize, String), String> {
        self.resolve_at(&self.docs[from].0, reference)
    }

    /// Where `reference`, written in document `from` under base URI `base`, points. A
    /// reference that resolves nowhere under an `$id` is tried as written in the file.
    pub fn resolve_in(&self, from: usize, base: &Url, reference: &str) -> Result<(usize, String), String> {
        let own = &self.docs[from].0;
        self.resolve_at(base, reference)
            .or_else(|e| if base == own { Err(e) } else { self.resolve_at(own, reference).map_err(|_| e) })
    }

    /// `reference` resolved against `base` (JSON Schema 2020-12 Core § 8.2.3.1): the
    /// resource is a file read or a schema's `$id`; the fragment a JSON pointer in it or one
    /// of its `$anchor`s (§ 8.2.2).
    fn resolve_at(&self, base: &Url, reference: &str) -> Result<(usize, String), String> {
        let fail = |why: String| format!("$ref '{reference}' cannot be resolved: {why}");
        let joined;
        let (resource, fragment) = match reference.strip_prefix('#') {
            Some(fragment) => (base, fragment),
            None => {
                let mut url = base.join(reference).map_err(|e| fail(format!("not a URI reference ({e})")))?;
                let fragment = url.fragment().unwrap_or_default().to_owned();
                url.set_fragment(None);
                joined = (url, fragment);
                (&joined.0, joined.1.as_str())
            }
        };
        let (doc, prefix) = if let Some(doc) = self.by_url.get(resource) {
            (*doc, "")
        } else if let Some((doc, pointer)) = self.ids.resource(resource) {
            (*doc, pointer.as_str())
        } else {
            return Err(fail(match self.unreadable.get(resource) {
                Some(why) => why.clone(),
                None if !same_origin(resource, &self.docs[0].0) => {
                    format!("{resource} is on another origin than the document (only files beside it are read)")
                }
                None => format!("no file read and no schema $id is {resource}"),
            }));
        };
        let fragment = percent_decode(fragment);
        let pointer = if fragment.is_empty() || fragment.starts_with('/') {
            format!("{prefix}{fragment}")
        } else {
            let Some((d, pointer)) = self.ids.anchor_in(resource, &fragment) else {
                return Err(fail(format!("no $anchor '{fragment}' in {resource}")));
            };
            return Ok((*d, pointer.clone()));
        };
        if self.docs[doc].1.pointer(&pointer).is_none() {
            return Err(fail(format!("nothing at '{pointer}' in {}", self.docs[doc].0)));
        }
        Ok((doc, pointer))
    }

    /// The base URI in force at `pointer` of document `doc` (the `$id`s enclosing it).
    pub fn base_at(&self, doc: usize, pointer: &str) -> Url {
        let (url, value) = &self.docs[doc];
        ids::base_at(url, value, pointer)
    }

    /// The value at `pointer` in document `doc`.
    pub fn get(&self, doc: usize, pointer: &str) -> Option<&Value> {
        self.docs.get(doc)?.1.pointer(pointer)
    }
}

/// Bytes read so far against `max_spec_bytes`.
struct Budget {
    max: usize,
    used: usize,
}

impl Budget {
    fn too_large(&self, url: &Url) -> String {
        format!(
            "the document and the files it references come to more than max_spec_bytes = {} bytes (reached \
             reading {url}): raise max_spec_bytes",
            self.max
        )
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

/// Reads and parses one document within what is left of the budget; its size in bytes.
async fn read(client: &reqwest::Client, url: &Url, budget: &Budget) -> Result<(Value, usize), ReadError> {
    let left = budget.max.saturating_sub(budget.used);
    let bytes = match url.scheme() {
        "file" => {
            let path = url.to_file_path().map_err(|()| ReadError::Failed(format!("{url} is not a file path")))?;
            let failed = |e: std::io::Error| ReadError::Failed(format!("cannot read {}: {e}", path.display()));
            let len = tokio::fs::metadata(&path).await.map_err(failed)?.len();
            if len > left as u64 {
                return Err(ReadError::TooLarge(budget.too_large(url)));
            }
            tokio::fs::read(&path).await.map_err(failed)?
        }
        _ => {
            let failed = |e: reqwest::Error| ReadError::Failed(format!("cannot fetch {url}: {e}"));
            let mut response = client.get(url.clone()).send().await.map_err(failed)?;
            if !response.status().is_success() {
                return Err(ReadError::Failed(format!("fetching {url} answered HTTP {}", response.status())));
            }
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(failed)? {
                if body.len() + chunk.len() > left {
                    return Err(ReadError::TooLarge(budget.too_large(url)));
                }
                body.extend_from_slice(&chunk);
            }
            body
        }
    };
    let value = parse(&bytes).map_err(|e| ReadError::Failed(format!("{url}: {e}")))?;
    Ok((value, bytes.len()))
}

/// A URI fragment's percent-escapes (`#/paths/~1pets%7Bid%7D`) decoded into a JSON pointer.
fn percent_decode(fragment: &str) -> String {
    percent_encoding::percent_decode_str(fragment).decode_utf8_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn load(dir: &std::path::Path, max: usize) -> Result<Documents, String> {
        Documents::load(dir.join("api.yaml").to_str().unwrap(), max).await
    }

    #[tokio::test]
    async fn sibling_files_are_read_and_resolved() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("api.yaml"),
            "openapi: 3.1.0\nx: {$ref: 'parts/pet.yaml#/Pet'}\ny: {$ref: 'gone.yaml#/Z'}\n",
        )
        .unwrap();
        std::fs::create_dir(dir.path().join("parts")).unwrap();
        std::fs::write(dir.path().join("parts/pet.yaml"), "Pet: {type: object}\n").unwrap();
        let docs = load(dir.path(), DEFAULT_MAX_BYTES).await.unwrap();
        let (doc, pointer) = docs.resolve(0, "parts/pet.yaml#/Pet").unwrap();
        assert_eq!(docs.get(doc, &pointer).unwrap()["type"], "object");
        let e = docs.resolve(0, "#/nope").unwrap_err();
        assert!(e.starts_with("$ref '#/nope' cannot be resolved: nothing at '/nope'"), "{e}");
        // A missing referenced file is the reason of the references into it, not a refusal.
        let e = docs.resolve(0, "gone.yaml#/Z").unwrap_err();
        assert!(e.contains("cannot read") && e.contains("gone.yaml"), "{e}");
        let e =
            Documents::load(dir.path().join("missing.yaml").to_str().unwrap(), DEFAULT_MAX_BYTES).await.unwrap_err();
        assert!(e.contains("cannot read"), "{e}");
    }

    /// Issue 30 item 1: more than 64 referenced files were refused. 300 path files, each
    /// referencing its own schema file (601 files), load; a bound below their total size
    /// refuses them naming the key.
    #[tokio::test]
    async fn hundreds_of_files_load_within_the_byte_bound() {
        let dir = tempfile::tempdir().unwrap();
        let mut root = String::from("openapi: 3.1.0\ninfo: {title: many, version: '1'}\npaths:\n");
        std::fs::create_dir(dir.path().join("paths")).unwrap();
        std::fs::create_dir(dir.path().join("schemas")).unwrap();
        for i in 0..300 {
            root.push_str(&format!("  /items{i}: {{$ref: 'paths/items{i}.yaml'}}\n"));
            let item = format!(
                "get:\n  operationId: get{i}\n  parameters:\n    - {{name: q, in: query, schema: {{$ref: '../schemas/q{i}.yaml'}}}}\n"
            );
            std::fs::write(dir.path().join(format!("paths/items{i}.yaml")), item).unwrap();
            std::fs::write(dir.path().join(format!("schemas/q{i}.yaml")), "type: string\nmaxLength: 10\n").unwrap();
        }
        std::fs::write(dir.path().join("api.yaml"), &root).unwrap();
        let start = std::time::Instant::now();
        let docs = load(dir.path(), DEFAULT_MAX_BYTES).await.unwrap();
        assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
        assert_eq!(docs.docs.len(), 601);
        let (d, p) = docs.resolve(0, "paths/items299.yaml").unwrap();
        let (s, _) = docs.resolve(d, "../schemas/q299.yaml").unwrap();
        assert_eq!((p.as_str(), docs.url(s).path().ends_with("schemas/q299.yaml")), ("", true));
        let e = load(dir.path(), root.len() + 100).await.unwrap_err();
        assert!(e.contains(&format!("more than max_spec_bytes = {} bytes", root.len() + 100)), "{e}");
        assert!(e.ends_with("raise max_spec_bytes"), "{e}");
    }

    #[test]
    fn fragments_are_percent_decoded() {
        assert_eq!(percent_decode("/paths/~1pets%7Bid%7D"), "/paths/~1pets{id}");
        assert_eq!(percent_decode("%zz"), "%zz");
    }
}
