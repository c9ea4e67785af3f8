//! Response bodies, serialized straight into one buffer. Results carry `resultType`
//! (MCP 2026-07-28 basic § Result types (resultType)) and `_meta.serverInfo` (MCP 2026-07-28 basic § Result and notification _meta); pre-rendered results (lists, discover)
//! are spliced in as raw JSON.

use std::collections::BTreeMap;

use mcp_protocol::{RequestId, meta};
use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::RpcError;

/// `resultType` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultType {
    /// A final result.
    Complete,
    /// An MRTR interim result.
    InputRequired,
    /// A tasks-extension `CreateTaskResult`.
    Task,
}

/// A result object: `resultType`, the fields of `body`, then `_meta` with `serverInfo`
/// merged with the body's own `_meta` entries.
#[derive(Serialize)]
pub struct ResultObject<'a, B: Serialize> {
    #[serde(rename = "resultType")]
    result_type: ResultType,
    #[serde(flatten)]
    body: &'a B,
    #[serde(rename = "_meta")]
    meta: ResultMeta<'a>,
}

impl<'a, B: Serialize> ResultObject<'a, B> {
    /// A result whose body has no `_meta` of its own.
    pub fn new(result_type: ResultType, body: &'a B, server_info: &'a ServerInfo) -> Self {
        Self { result_type, body, meta: ResultMeta { server_info, extra: None } }
    }

    /// Adds `_meta` entries beside `serverInfo` (the body must not serialize its own `_meta`).
    pub fn with_meta(mut self, extra: Option<&'a Map<String, Value>>) -> Self {
        self.meta.extra = extra;
        self
    }
}

/// The server's `serverInfo`, rendered once, and the `_meta` of a result that carries nothing
/// else (`{"io.modelcontextprotocol/serverInfo": …}`, most results), rendered once too.
#[derive(Debug)]
pub struct ServerInfo {
    info: Box<RawValue>,
    meta: Box<RawValue>,
}

impl ServerInfo {
    /// Renders `info`.
    pub fn new<T: Serialize + ?Sized>(info: &T) -> Self {
        let info = serde_json::value::to_raw_value(info).expect("serializable server info");
        let meta = serde_json::value::to_raw_value(&BTreeMap::from([(meta::SERVER_INFO, &*info)]))
            .expect("serializable _meta");
        Self { info, meta }
    }

    /// The rendered `serverInfo`.
    pub fn info(&self) -> &RawValue {
        &self.info
    }
}

/// `_meta` of a result: the one rendered with the server info, or `serverInfo` and `extra`.
pub struct ResultMeta<'a> {
    server_info: &'a ServerInfo,
    extra: Option<&'a Map<String, Value>>,
}

impl Serialize for ResultMeta<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Some(extra) = self.extra else { return self.server_info.meta.serialize(s) };
        let mut map = s.serialize_map(None)?;
        map.serialize_entry(meta::SERVER_INFO, &*self.server_info.info)?;
        for (k, v) in extra {
            if k != meta::SERVER_INFO {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}

#[derive(Serialize)]
struct Failure<'a> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a RequestId>,
    error: ErrorBody<'a>,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    code: i32,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<&'a Value>,
}

#[derive(Serialize)]
struct Notification<'a, P: Serialize> {
    jsonrpc: &'static str,
    method: &'a str,
    params: &'a P,
}

/// `{"jsonrpc":"2.0","id":…,"result":…}`: the envelope's fixed parts written as bytes.
pub fn success<R: Serialize + ?Sized>(id: &RequestId, result: &R) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    // Serializing our own types into a Vec cannot fail (no maps with non-string keys).
    serde_json::to_writer(&mut out, id).expect("serializable id");
    out.extend_from_slice(br#","result":"#);
    serde_json::to_writer(&mut out, result).expect("serializable result");
    out.push(b'}');
    out
}

/// `{"jsonrpc":"2.0","id"?:…,"error":{…}}`; the id is left out when it could not be read
/// (MCP 2026-07-28 basic § Messages, our choice where the spec leaves it open).
pub fn error(id: Option<&RequestId>, err: &RpcError) -> Vec<u8> {
    let (_, code) = err.kind.wire();
    let body = Failure {
        jsonrpc: "2.0",
        id,
        error: ErrorBody { code: code.code(), message: &err.message, data: err.data.as_ref() },
    };
    serde_json::to_vec(&body).expect("serializable error")
}

/// `{"jsonrpc":"2.0","method":…,"params":…}`.
pub fn notification<P: Serialize>(method: &str, params: &P) -> Vec<u8> {
    serde_json::to_vec(&Notification { jsonrpc: "2.0", method, params }).expect("serializable notification")
}

/// Renders a result object once, for results that never change between requests.
pub fn prerender<B: Serialize>(result: &ResultObject<'_, B>) -> Box<RawValue> {
    serde_json::value::to_raw_value(result).expect("serializable result")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn result_objects_carry_type_and_server_info() {
        let info = ServerInfo::new(&json!({"name":"s","version":"1"}));
        let body = json!({"tools": []});
        let extra: Map<String, Value> = [("k".to_owned(), json!(1))].into_iter().collect();
        let r = ResultObject::new(ResultType::Complete, &body, &info).with_meta(Some(&extra));
        let bytes = success(&RequestId::Int(7), &r);
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            v,
            json!({"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","tools":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"},"k":1}}})
        );
        // Without entries of its own, `_meta` is the one rendered with the server info.
        let r = ResultObject::new(ResultType::InputRequired, &body, &info);
        assert_eq!(
            String::from_utf8(success(&RequestId::Str("a".into()), &r)).unwrap(),
            r#"{"jsonrpc":"2.0","id":"a","result":{"resultType":"input_required","tools":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}}"#
        );
    }

    #[test]
    fn errors_without_id_leave_it_out() {
        let e = RpcError::new(super::super::Kind::Parse, "Parse error");
        let v: Value = serde_json::from_slice(&error(None, &e)).unwrap();
        assert_eq!(v, json!({"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}));
    }
}
