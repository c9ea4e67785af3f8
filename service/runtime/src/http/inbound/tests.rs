use super::*;

#[test]
fn accept_parsing() {
    let mut h = HeaderMap::new();
    assert_eq!(accepts(&h), (true, true));
    h.insert(header::ACCEPT, "application/json".parse().unwrap());
    assert_eq!(accepts(&h), (true, false));
    h.insert(header::ACCEPT, "text/event-stream, application/json;q=0.9".parse().unwrap());
    assert_eq!(accepts(&h), (true, true));
    h.insert(header::ACCEPT, "text/html".parse().unwrap());
    assert_eq!(accepts(&h), (false, false));
    // The usual value, alone or beside another Accept header (which is read too).
    h.insert(header::ACCEPT, "application/json, text/event-stream".parse().unwrap());
    assert_eq!(accepts(&h), (true, true));
    h.insert(header::ACCEPT, "text/html".parse().unwrap());
    h.append(header::ACCEPT, "application/json".parse().unwrap());
    assert_eq!(accepts(&h), (true, false), "every Accept header counts");
    assert!(media_type_is("application/json; charset=utf-8", "application/json"));
    assert!(!media_type_is("text/plain", "application/json"));
}

fn parts(version: Version, uri: &str, host: Option<&str>) -> Parts {
    let mut req = axum::http::Request::post(uri).version(version);
    if let Some(host) = host {
        req = req.header(header::HOST, host);
    }
    req.body(()).unwrap().into_parts().0
}

#[test]
fn authority_is_the_uri_authority_for_http2_and_host_for_http1() {
    let authority = |p: &Parts| authority(p.version, &p.uri, &p.headers).map(str::to_owned);
    let h2 = parts(Version::HTTP_2, "https://mcp.example.com:8443/mcp", None);
    assert_eq!(authority(&h2).unwrap(), "mcp.example.com:8443", "HTTP/2 without Host: :authority");
    let same = parts(Version::HTTP_2, "https://localhost:1/mcp", Some("LOCALHOST:1"));
    assert_eq!(authority(&same).unwrap(), "localhost:1");
    let split = parts(Version::HTTP_2, "https://localhost:1/mcp", Some("evil.example"));
    let err = authority(&split).unwrap_err();
    assert_eq!(err.kind, Kind::InvalidRequest, "Host disagreeing with :authority is malformed");
    assert!(err.message.contains("disagrees with :authority"), "{}", err.message);
    assert_eq!(authority(&parts(Version::HTTP_11, "/mcp", Some("localhost:8080"))).unwrap(), "localhost:8080");
    // An HTTP/1.1 absolute-form target names the authority; Host is ignored (RFC 9112 §3.2.2).
    assert_eq!(authority(&parts(Version::HTTP_11, "http://localhost/mcp", Some("other"))).unwrap(), "localhost");
    let none = authority(&parts(Version::HTTP_11, "/mcp", None)).unwrap_err();
    assert_eq!(none.kind, Kind::InvalidRequest, "HTTP/1.1 without Host is a 400 (RFC 9112 §3.2)");
    // Two Host field lines, equal or not, in any version: 400 (RFC 9112 §3.2).
    for (version, uri) in [
        (Version::HTTP_11, "/mcp"),
        (Version::HTTP_11, "http://localhost/mcp"),
        (Version::HTTP_2, "https://localhost/mcp"),
    ] {
        for second in ["localhost", "evil.example"] {
            let mut two = parts(version, uri, Some("localhost"));
            two.headers.append(header::HOST, axum::http::HeaderValue::from_static(second));
            let err = authority(&two).unwrap_err();
            assert_eq!(err.kind, Kind::InvalidRequest, "{version:?} {uri} Host: localhost, {second}");
            assert!(err.message.contains("more than one Host"), "{}", err.message);
        }
    }
}

/// Fragments the generated bodies are made of: valid and invalid pieces of each level,
/// escaped keys, repeated keys, serde_json's raw-value marker, out-of-range numbers. The
/// first ones of each list make a valid object together.
const TOP: &[&str] = &[
    r#""jsonrpc":"2.0""#,
    r#""id":1"#,
    r#""method":"tools/call""#,
    r#""jsonrpc":"1.0""#,
    r#""jsonrpc":2"#,
    r#""jsonr\u0070c":"2.0""#,
    r#""id":"abc""#,
    r#""id":"a\"b""#,
    r#""id":1.5"#,
    r#""id":null"#,
    r#""id":-3"#,
    r#""id":18446744073709551615"#,
    r#""method":"tools\/list""#,
    r#""method":5"#,
    r#""params":null"#,
    r#""params":[1]"#,
    r#""extra":[1,{"a":1e5},"x"]"#,
    r#""result":1"#,
    r#""$serde_json::private::RawValue":"{}""#,
    r#""big":1e400"#,
    r#""bad":"\ud800""#,
];
const PARAMS: &[&str] = &[
    r#""_meta":null"#,
    r#""_meta":{}"#,
    r#""name":"echo""#,
    r#""name":3"#,
    r#""arguments":{"text":"hi"}"#,
    r#""arguments":{"a":[1,2,{"b":null}],"c":true}"#,
    r#""cursor":"x""#,
    r#""$serde_json::private::RawValue":"[1]""#,
    r#""n":1e400"#,
];
const META: &[&str] = &[
    r#""io.modelcontextprotocol/protocolVersion":"2026-07-28""#,
    r#""io.modelcontextprotocol/clientCapabilities":{}"#,
    r#""io.modelcontextprotocol/protocolVersion":"2025-11-25""#,
    r#""io.modelcontextprotocol/protocolVersion":1"#,
    r#""io.modelcontextprotocol/clientCapabilities":{"sampling":{},"x":[1]}"#,
    r#""io.modelcontextprotocol/clientCapabilities":[]"#,
    r#""io.modelcontextprotocol/clientInfo":{"name":"a","version":"1"}"#,
    r#""io.modelcontextprotocol/clientInfo":{"name":"a"}"#,
    r#""io.modelcontextprotocol/clientInfo":{"name":1,"version":"1","name":"b"}"#,
    r#""io.modelcontextprotocol/clientInfo":{"name":"a","version":"1","version":{}}"#,
    r#""io.modelcontextprotocol/clientInfo":"x""#,
    r#""progressToken":5"#,
    r#""progressToken":"t""#,
    r#""progressToken":1.5"#,
    r#""progressToken":-1"#,
    r#""io.modelcontextprotocol/logLevel":"warning""#,
    r#""io.modelcontextprotocol/logLevel":"loud""#,
    r#""traceparent":"00-abc""#,
    r#""traceparent":5"#,
    r#""tracestate":"s""#,
    r#""baggage":"b""#,
    r#""baggage":{"x":[1e5]}"#,
    r#""other":{"deep":[1,"\u00e9",null]}"#,
    r#""$serde_json::private::RawValue":"1""#,
];

/// An object of `extra`, usually the first `valid` fragments (a valid object), and 0–3
/// random ones (repeats included), shuffled.
fn object(rng: &mut fastrand::Rng, fragments: &[&str], valid: usize, extra: Option<String>) -> String {
    let mut entries: Vec<String> =
        (0..rng.usize(0..4)).map(|_| fragments[rng.usize(..fragments.len())].to_owned()).collect();
    if rng.u8(..4) > 0 {
        entries.extend(fragments[..valid].iter().map(|f| (*f).to_owned()));
    }
    entries.extend(extra);
    rng.shuffle(&mut entries);
    format!("{{{}}}", entries.join(","))
}

/// Whenever the typed read accepts a body, the `Value` path reads the same request out of
/// it (`rpc::read` relies on this: what it does not accept goes the `Value` path anyway).
#[test]
fn the_typed_read_agrees_with_the_value_path() {
    let mut headers = HeaderMap::new();
    headers.insert(headers::PROTOCOL_VERSION, "2026-07-28".parse().unwrap());
    let mut rng = fastrand::Rng::with_seed(11);
    let (mut accepted, mut total) = (0, 0);
    for _ in 0..100_000 {
        let meta = object(&mut rng, META, 2, None);
        let with_meta = (rng.u8(..8) > 0).then(|| format!(r#""_meta":{meta}"#));
        let params = object(&mut rng, PARAMS, 0, with_meta);
        let with_params = (rng.u8(..8) > 0).then(|| format!(r#""params":{params}"#));
        let mut body = object(&mut rng, TOP, 3, with_params);
        if rng.u8(..20) == 0 {
            body.truncate(rng.usize(..body.len()));
        }
        total += 1;
        match typed_read_agrees(&headers, body.as_bytes()) {
            Ok(true) => accepted += 1,
            Ok(false) => {}
            Err(e) => panic!("{e}"),
        }
    }
    assert!(accepted > total / 100, "too few accepted bodies to compare: {accepted} of {total}");
}

#[test]
fn the_typed_read_takes_the_common_request() {
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1.0.0"},
        "io.modelcontextprotocol/clientCapabilities":{},"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","tracestate":"a=b"}}}"#;
    let r = read::request(body).expect("the common case");
    assert_eq!(r.id, RequestId::Int(1));
    assert!(matches!(r.method, Cow::Borrowed("tools/call")), "borrowed from the body");
    assert_eq!(r.params.len(), 2);
    assert_eq!(r.envelope.protocol_version, "2026-07-28");
    assert_eq!(r.envelope.tracestate.as_deref(), Some("a=b"));
    let repeated = br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    assert!(read::request(repeated).is_none(), "a repeated key goes the Value path");
}
