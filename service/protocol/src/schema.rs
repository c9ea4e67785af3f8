//! One shared copy of each distinct JSON Schema a process holds.
//!
//! A large catalog repeats its schemas: the operations of one API take the same parameters,
//! and a tool's schema is held by the config, the adapter's catalog and the registry. A schema
//! as a `serde_json::Value` costs several KB, so tools whose schemas are equal share one
//! `Arc` ([`intern`]); the registry then also shares their validators.
//!
//! The table keeps only a hash and a weak reference per schema: a schema nobody holds any more
//! (after a reload) is freed, and its entry is dropped on a later pass.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher, RandomState};
use std::io::Write;
use std::sync::{Arc, LazyLock, Mutex, PoisonError, Weak};

use serde::{Deserialize, Deserializer};
use serde_json::Value;

struct Table {
    by_hash: HashMap<u64, Vec<Weak<Value>>>,
    entries: usize,
    /// Sweep dead entries when `entries` reaches this.
    next_sweep: usize,
}

static TABLE: LazyLock<Mutex<Table>> =
    LazyLock::new(|| Mutex::new(Table { by_hash: HashMap::new(), entries: 0, next_sweep: 1024 }));
static HASHER: LazyLock<RandomState> = LazyLock::new(RandomState::new);

/// The shared copy of `schema`: an existing `Arc` of an equal schema when one is alive,
/// otherwise `schema` itself, recorded for the next caller.
pub fn intern(schema: Value) -> Arc<Value> {
    let hash = hash(&schema);
    let mut table = TABLE.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(found) =
        table.by_hash.get(&hash).and_then(|list| list.iter().filter_map(Weak::upgrade).find(|s| **s == schema))
    {
        return found;
    }
    let shared = Arc::new(schema);
    table.by_hash.entry(hash).or_default().push(Arc::downgrade(&shared));
    table.entries += 1;
    if table.entries >= table.next_sweep {
        table.by_hash.retain(|_, list| {
            list.retain(|w| w.strong_count() > 0);
            !list.is_empty()
        });
        table.entries = table.by_hash.values().map(Vec::len).sum();
        table.next_sweep = (table.entries * 2).max(1024);
    }
    shared
}

/// `#[serde(deserialize_with = "mcp_protocol::schema::deserialize")]` for an `Arc<Value>` field.
pub fn deserialize<'de, D: Deserializer<'de>>(de: D) -> Result<Arc<Value>, D::Error> {
    Value::deserialize(de).map(intern)
}

/// The same for an `Option<Arc<Value>>` field.
pub fn deserialize_option<'de, D: Deserializer<'de>>(de: D) -> Result<Option<Arc<Value>>, D::Error> {
    Ok(Option::<Value>::deserialize(de)?.map(intern))
}

/// Hashes the compact JSON text without building it (serde_json's maps are sorted, so equal
/// values write equal text).
fn hash(schema: &Value) -> u64 {
    struct Sink<H>(H);
    impl<H: Hasher> Write for Sink<H> {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.write(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut sink = Sink(HASHER.build_hasher());
    serde_json::to_writer(&mut sink, schema).expect("a Value always serializes");
    sink.0.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_schemas_share_one_copy_and_different_ones_do_not() {
        let a = intern(json!({"type": "object", "properties": {"x": {"type": "string"}}}));
        let b = intern(json!({"properties": {"x": {"type": "string"}}, "type": "object"}));
        let c = intern(json!({"type": "object", "properties": {"x": {"type": "integer"}}}));
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(*c, json!({"type": "object", "properties": {"x": {"type": "integer"}}}));
    }

    #[test]
    fn a_schema_nobody_holds_is_freed() {
        let schema = json!({"type": "object", "title": "freed when dropped"});
        let weak = Arc::downgrade(&intern(schema.clone()));
        assert!(weak.upgrade().is_none(), "the table must not keep a schema alive");
        // Interning it again makes a new copy.
        assert_eq!(*intern(schema.clone()), schema);
    }
}
