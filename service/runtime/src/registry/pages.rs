//! Pre-rendered list pages with opaque, stateless cursors (MCP 2026-07-28 server/utilities/pagination).
//!
//! A cursor is `base64url("<list digest>:<page index>")`: any replica with the same
//! configuration can continue a listing, and a cursor from a list that has since changed
//! is refused with `-32602` so the client starts over (MCP 2026-07-28 server/utilities/caching; server/utilities/pagination).

use std::collections::HashMap;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcp_protocol::CacheHint;
use serde::Serialize;
use serde_json::value::RawValue;

use crate::rpc::RpcError;
use crate::rpc::response::{ResultObject, ResultType, ServerInfo, prerender};

/// All pages of one list, rendered as complete result objects.
#[derive(Debug)]
pub struct Pages {
    digest: u64,
    pages: Vec<Box<RawValue>>,
}

impl Pages {
    /// Splits `items` into pages of `page_size` and renders each with `render(items, next_cursor)`.
    /// `keys` feeds the digest (names or URIs, in list order).
    pub fn build<'a, T>(
        items: &'a [T],
        keys: impl Iterator<Item = &'a str>,
        page_size: usize,
        mut render: impl FnMut(&'a [T], Option<String>) -> Box<RawValue>,
    ) -> Self {
        let digest = fnv1a(keys);
        let chunks: Vec<&[T]> = if items.is_empty() { vec![&[]] } else { items.chunks(page_size).collect() };
        let last = chunks.len() - 1;
        let pages = chunks
            .into_iter()
            .enumerate()
            .map(|(i, chunk)| render(chunk, (i < last).then(|| encode(digest, i + 1))))
            .collect();
        Self { digest, pages }
    }

    /// The page a cursor points at (`None`: the first page).
    pub fn page(&self, cursor: Option<&str>) -> Result<&RawValue, RpcError> {
        let index = match cursor {
            None => 0,
            Some(c) => self.decode(c).ok_or_else(|| {
                RpcError::invalid_params("Invalid cursor: it is malformed, expired, or from a list that has changed; list again without a cursor")
            })?,
        };
        Ok(&self.pages[index])
    }

    /// A hash of every rendered page: equal fingerprints, equal lists.
    pub fn fingerprint(&self) -> u64 {
        fnv1a(self.pages.iter().map(|p| p.get()))
    }

    fn decode(&self, cursor: &str) -> Option<usize> {
        let raw = URL_SAFE_NO_PAD.decode(cursor).ok()?;
        let text = std::str::from_utf8(&raw).ok()?;
        let (digest, index) = text.split_once(':')?;
        let index: usize = index.parse().ok()?;
        (u64::from_str_radix(digest, 16).ok()? == self.digest && index > 0 && index < self.pages.len()).then_some(index)
    }
}

fn encode(digest: u64, index: usize) -> String {
    URL_SAFE_NO_PAD.encode(format!("{digest:016x}:{index}"))
}

/// FNV-1a over the keys: stable across processes and builds, unlike `DefaultHasher`.
fn fnv1a<'a>(keys: impl Iterator<Item = &'a str>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for key in keys {
        for b in key.bytes().chain([0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// A list page body: the items under their list key plus paging and cache fields.
#[derive(Serialize)]
struct ListPage<'a, T: Serialize> {
    #[serde(flatten)]
    items: HashMap<&'static str, &'a [T]>,
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    next_cursor: Option<String>,
    #[serde(flatten)]
    hint: CacheHint,
}

/// Renders one list page: `{<key>: [...], nextCursor?, ttlMs, cacheScope}` as a result object.
pub fn page_renderer<'a, T: Serialize>(
    key: &'static str,
    hint: CacheHint,
    info: &'a ServerInfo,
) -> impl FnMut(&[T], Option<String>) -> Box<RawValue> + 'a {
    move |chunk, next_cursor| {
        let page = ListPage { items: HashMap::from([(key, chunk)]), next_cursor, hint };
        prerender(&ResultObject::new(ResultType::Complete, &page, info))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn pages(items: &[&str], size: usize) -> Pages {
        Pages::build(items, items.iter().copied(), size, |chunk, next| {
            serde_json::value::to_raw_value(&json!({"items": chunk, "nextCursor": next})).unwrap()
        })
    }

    #[test]
    fn walks_every_page_once() {
        let p = pages(&["a", "b", "c", "d", "e"], 2);
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page: Value = serde_json::from_str(p.page(cursor.as_deref()).unwrap().get()).unwrap();
            seen.extend(page["items"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()));
            match page["nextCursor"].as_str() {
                Some(c) => cursor = Some(c.to_owned()),
                None => break,
            }
        }
        assert_eq!(seen, ["a", "b", "c", "d", "e"]);
    }

    #[test]
    fn foreign_and_garbage_cursors_are_refused() {
        let a = pages(&["a", "b", "c"], 1);
        let b = pages(&["x", "y", "z"], 1);
        let from_b: Value = serde_json::from_str(b.page(None).unwrap().get()).unwrap();
        assert!(a.page(from_b["nextCursor"].as_str()).is_err());
        for bad in ["", "!!", "AAAA", &encode(a.digest, 0), &encode(a.digest, 3)] {
            assert!(a.page(Some(bad)).is_err(), "{bad}");
        }
        assert!(pages(&[], 10).page(None).is_ok());
    }
}
