//! Document text as a `serde_json::Value`: JSON by the JSON parser, YAML read straight into
//! JSON values (no intermediate YAML tree), with what YAML allows and JSON does not made
//! JSON: keys of any type become their text, integers beyond 64 bits become floats.

use std::fmt;

use serde::Deserializer as _;
use serde::de::{self, DeserializeSeed, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};
use serde_json::{Map, Number, Value};

/// JSON when the text starts with `{` or `[`, YAML otherwise (YAML 1.2 is a superset of JSON,
/// but the JSON parser is much faster on the large JSON specs).
pub fn parse(bytes: &[u8]) -> Result<Value, String> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if matches!(first, Some(b'{' | b'[')) {
        // serde_json reads an integer beyond 64 bits as a float by itself.
        return serde_json::from_slice(bytes).map_err(|e| format!("not valid JSON: {e}"));
    }
    serde_norway::Deserializer::from_slice(bytes).deserialize_any(Json).map_err(|e| format!("not valid YAML: {e}"))
}

/// Builds a JSON value from any YAML node.
#[derive(Clone, Copy)]
struct Json;

impl<'de> DeserializeSeed<'de> for Json {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

/// A number JSON can hold: an integer within 64 bits as it is, a larger one as the nearest
/// float (`minimum: -9223372036854776000` is a real-world bound), a non-finite float as null.
fn wide(i: i128) -> Value {
    if let Ok(v) = i64::try_from(i) {
        Value::from(v)
    } else if let Ok(v) = u64::try_from(i) {
        Value::from(v)
    } else {
        float(i as f64)
    }
}

fn float(f: f64) -> Value {
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}

impl<'de> Visitor<'de> for Json {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, i: i64) -> Result<Value, E> {
        Ok(Value::from(i))
    }
    fn visit_u64<E>(self, u: u64) -> Result<Value, E> {
        Ok(Value::from(u))
    }
    fn visit_i128<E>(self, i: i128) -> Result<Value, E> {
        Ok(wide(i))
    }
    fn visit_u128<E>(self, u: u128) -> Result<Value, E> {
        Ok(i128::try_from(u).map_or_else(|_| float(u as f64), wide))
    }
    fn visit_f64<E>(self, f: f64) -> Result<Value, E> {
        Ok(float(f))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(v) = seq.next_element_seed(self)? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::with_capacity(map.size_hint().unwrap_or(0));
        while let Some(key) = map.next_key_seed(self)? {
            let key = match key {
                Value::String(s) => s,
                // `200:` is an integer in YAML; `null:`, `true:`, `[a, b]:` keep their text.
                other => other.to_string(),
            };
            out.insert(key, map.next_value_seed(self)?);
        }
        Ok(Value::Object(out))
    }
    /// A tagged node (`!include x`): its value, the tag ignored.
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        let (_tag, node): (de::IgnoredAny, _) = data.variant()?;
        node.newtype_variant_seed(self)
    }
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
        assert_eq!(parse(b"true: 1\nnull: 2\n~: 3\n").unwrap(), serde_json::json!({"true": 1, "null": 3}));
        assert_eq!(parse(b"a: !custom {b: 1}\n").unwrap(), serde_json::json!({"a": {"b": 1}}));
        assert_eq!(parse(b" {\"a\": 1}").unwrap()["a"], 1);
        assert!(parse(b"{nope").unwrap_err().contains("JSON"));
        assert!(parse(b"a: [unclosed").unwrap_err().contains("YAML"));
    }

    /// Issue 30 item 2: a YAML integer beyond 64 bits refused the whole document.
    #[test]
    fn integers_beyond_64_bits_become_floats() {
        let v = parse(b"minimum: -9223372036854776000\nmaximum: 18446744073709551616\nn: 7\n").unwrap();
        assert_eq!(v["minimum"].as_f64(), Some(-9_223_372_036_854_776_000.0));
        assert_eq!(v["maximum"].as_f64(), Some(18_446_744_073_709_551_616.0));
        assert_eq!(v["n"].as_i64(), Some(7));
        assert_eq!(parse(b"u: 18446744073709551615\n").unwrap()["u"].as_u64(), Some(u64::MAX));
        let json = parse(b"{\"minimum\": -9223372036854776000}").unwrap();
        assert_eq!(json["minimum"].as_f64(), Some(-9_223_372_036_854_776_000.0));
    }
}
