//! The common case of reading a request body, in one typed pass: a well-formed request with
//! a valid `_meta` envelope, keys and strings borrowed from the body where they can be,
//! instead of a `serde_json::Value` tree that allocates every key and string (measured: a
//! third of a `tools/call`'s instructions went to building and taking apart that tree).
//!
//! Anything else (invalid JSON, a notification, a repeated key, a wrong type, a broken
//! envelope) is `None`, and the caller reads the body again as a `Value` tree: that path
//! words every refusal and stays the reference (`http::inbound::parse`). So this pass only
//! has to agree with it on the bodies it accepts, which holds because:
//!
//! - the body is UTF-8 (checked once, up front), and every value it keeps or drops goes
//!   through serde_json's `deserialize_any`, which checks exactly what parsing into a `Value`
//!   checks (escapes, number ranges, nesting); `IgnoredAny` would not (it skips numbers
//!   unchecked);
//! - a repeated key among those it reads is `None` (a `Value` map keeps the last one); the
//!   other keys of `params` go into the same map, where the last one wins as well;
//! - a key equal to serde_json's raw-value marker is `None` (a `Value` map gives it a
//!   meaning of its own).

use std::borrow::Cow;
use std::fmt;

use mcp_protocol::{RequestId, meta};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::Envelope;

/// A request that got through steps 4–7 of MCP 2026-07-28 basic/transports/streamable-http § Sending messages to the server, except for the header checks.
#[derive(Debug)]
pub struct Request<'a> {
    /// The JSON-RPC id.
    pub id: RequestId,
    /// `method`, as sent.
    pub method: Cow<'a, str>,
    /// `params` without `_meta`.
    pub params: Map<String, Value>,
    /// The valid envelope.
    pub envelope: Envelope,
}

/// The request in `body`, when it is the common case (see the module doc).
pub fn request(body: &[u8]) -> Option<Request<'_>> {
    // UTF-8 checked once, for the whole body: `from_slice` would check each string on its
    // own, at a cost per string (measured: ~1.7 k of a `tools/call`'s instructions).
    let text = std::str::from_utf8(body).ok()?;
    let top: Top<'_> = serde_json::from_str(text).ok()?;
    if !top.jsonrpc? {
        return None;
    }
    let Params { rest, meta } = top.params?;
    let meta = meta?;
    let text = |t: Option<Option<Cow<'_, str>>>| t.flatten().map(Cow::into_owned);
    let traceparent = text(meta.traceparent);
    let envelope = Envelope {
        protocol_version: meta.protocol_version?.into_owned(),
        client_capabilities: meta.client_capabilities?,
        progress_token: meta.progress_token,
        log_level: meta.log_level,
        tracestate: traceparent.as_ref().and(text(meta.tracestate)),
        traceparent,
        baggage: text(meta.baggage),
        client: meta.client_info.map(|(name, version)| super::client::label(&name, &version)),
        legacy: false,
    };
    Some(Request { id: top.id?, method: top.method?, params: rest, envelope })
}

/// serde_json's raw-value marker: the first key of a map that a `Value` reads as "parse this
/// string as JSON" (`serde_json::raw::TOKEN`, not public).
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// Why this pass gave up; never shown (the `Value` path words the refusal).
fn give_up<E: de::Error>() -> E {
    E::custom("not the common case")
}

/// Stores a field's value, giving up when the key came twice.
fn once<T, E: de::Error>(slot: &mut Option<T>, value: T) -> Result<(), E> {
    if slot.replace(value).is_some() { Err(give_up()) } else { Ok(()) }
}

/// The top-level object.
#[derive(Default)]
struct Top<'a> {
    /// `jsonrpc` is `"2.0"`.
    jsonrpc: Option<bool>,
    id: Option<RequestId>,
    method: Option<Cow<'a, str>>,
    params: Option<Params<'a>>,
}

impl<'de> de::Deserialize<'de> for Top<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TopVisitor)
    }
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Top<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC request object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top<'de>, A::Error> {
        let mut top = Top::default();
        while let Some(key) = map.next_key_seed(Key)? {
            match &*key {
                "jsonrpc" => once(&mut top.jsonrpc, map.next_value_seed(Text)? == "2.0")?,
                "id" => once(&mut top.id, map.next_value_seed(Id)?)?,
                "method" => once(&mut top.method, map.next_value_seed(Text)?)?,
                "params" => once(&mut top.params, map.next_value_seed(ParamsSeed)?)?,
                _ => drop(map.next_value_seed(AnyValue)?),
            }
        }
        Ok(top)
    }
}

/// `params`: `_meta` read into the envelope's fields, every other key into a `Value` map.
struct Params<'a> {
    rest: Map<String, Value>,
    meta: Option<Meta<'a>>,
}

struct ParamsSeed;

impl<'de> DeserializeSeed<'de> for ParamsSeed {
    type Value = Params<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Params<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ParamsSeed {
    type Value = Params<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a params object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Params<'de>, A::Error> {
        let mut params = Params { rest: Map::new(), meta: None };
        while let Some(key) = map.next_key_seed(Key)? {
            if key == "_meta" {
                once(&mut params.meta, map.next_value_seed(MetaSeed)?)?;
            } else {
                let value: Value = map.next_value()?;
                params.rest.insert(key.into_owned(), value);
            }
        }
        Ok(params)
    }
}

/// `params._meta` (MCP 2026-07-28 basic § Request metadata (_meta); basic § Request metadata (_meta), errors), with what `rpc::envelope::take` requires of each field
/// checked here: a field it would refuse makes this pass give up.
#[derive(Default)]
struct Meta<'a> {
    protocol_version: Option<Cow<'a, str>>,
    client_capabilities: Option<Value>,
    /// `clientInfo`'s `name` and `version`.
    client_info: Option<(Cow<'a, str>, Cow<'a, str>)>,
    progress_token: Option<Value>,
    log_level: Option<usize>,
    /// Trace context: `Some(None)` for a value that is not a string (ignored, as `take` does).
    traceparent: Option<Option<Cow<'a, str>>>,
    tracestate: Option<Option<Cow<'a, str>>>,
    baggage: Option<Option<Cow<'a, str>>>,
}

struct MetaSeed;

impl<'de> DeserializeSeed<'de> for MetaSeed {
    type Value = Meta<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Meta<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for MetaSeed {
    type Value = Meta<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a _meta object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Meta<'de>, A::Error> {
        let mut m = Meta::default();
        while let Some(key) = map.next_key_seed(Key)? {
            match &*key {
                meta::PROTOCOL_VERSION => once(&mut m.protocol_version, map.next_value_seed(Text)?)?,
                meta::CLIENT_CAPABILITIES => {
                    let caps: Value = map.next_value()?;
                    if !caps.is_object() {
                        return Err(give_up());
                    }
                    once(&mut m.client_capabilities, caps)?;
                }
                meta::CLIENT_INFO => {
                    let info = map.next_value_seed(ClientInfo)?.ok_or_else(give_up)?;
                    once(&mut m.client_info, info)?;
                }
                meta::PROGRESS_TOKEN => {
                    let token: Value = map.next_value()?;
                    if !(token.is_string() || token.is_i64() || token.is_u64()) {
                        return Err(give_up());
                    }
                    once(&mut m.progress_token, token)?;
                }
                meta::LOG_LEVEL => {
                    let level = map.next_value_seed(Text)?;
                    let rank = meta::LOG_LEVELS.iter().position(|l| *l == level).ok_or_else(give_up)?;
                    once(&mut m.log_level, rank)?;
                }
                meta::TRACEPARENT => once(&mut m.traceparent, map.next_value_seed(AnyValue)?)?,
                meta::TRACESTATE => once(&mut m.tracestate, map.next_value_seed(AnyValue)?)?,
                meta::BAGGAGE => once(&mut m.baggage, map.next_value_seed(AnyValue)?)?,
                _ => drop(map.next_value_seed(AnyValue)?),
            }
        }
        Ok(m)
    }
}

/// `clientInfo`: its (last) `name` and `version`, when it is an object and both are strings.
struct ClientInfo;

impl<'de> DeserializeSeed<'de> for ClientInfo {
    type Value = Option<(Cow<'de, str>, Cow<'de, str>)>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ClientInfo {
    type Value = Option<(Cow<'de, str>, Cow<'de, str>)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a clientInfo object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut name, mut version) = (None, None);
        while let Some(key) = map.next_key_seed(Key)? {
            match &*key {
                "name" => name = map.next_value_seed(AnyValue)?,
                "version" => version = map.next_value_seed(AnyValue)?,
                _ => drop(map.next_value_seed(AnyValue)?),
            }
        }
        Ok(name.zip(version))
    }
}

/// A map key, borrowed unless it has escapes; the raw-value marker gives up.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        let key = d.deserialize_str(Text)?;
        if key == RAW_VALUE_TOKEN { Err(give_up()) } else { Ok(key) }
    }
}

/// A string, borrowed unless it has escapes; anything else gives up.
struct Text;

impl<'de> DeserializeSeed<'de> for Text {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Text {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
}

/// A JSON-RPC id: a string or an integer that fits `i64` (`RequestId::from_value`);
/// anything else gives up.
struct Id;

impl<'de> DeserializeSeed<'de> for Id {
    type Value = RequestId;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<RequestId, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Id {
    type Value = RequestId;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a request id")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<RequestId, E> {
        Ok(RequestId::Str(v.to_owned()))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RequestId, E> {
        Ok(RequestId::Int(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RequestId, E> {
        i64::try_from(v).map(RequestId::Int).map_err(|_| give_up())
    }
}

/// Any value, checked as parsing it into a `Value` would check it: `Some` for a string,
/// `None` for anything else (read in full and dropped).
struct AnyValue;

impl<'de> DeserializeSeed<'de> for AnyValue {
    type Value = Option<Cow<'de, str>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for AnyValue {
    type Value = Option<Cow<'de, str>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(v.to_owned())))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element_seed(AnyValue)?.is_some() {}
        Ok(None)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_key_seed(Key)?.is_some() {
            map.next_value_seed(AnyValue)?;
        }
        Ok(None)
    }
}
