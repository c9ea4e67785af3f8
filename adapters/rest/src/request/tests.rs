//! Hand-written tools compiled and prepared: path, query, headers, body, load errors.

use serde_json::json;

use super::*;

fn tool(v: Value) -> Result<(Plan, ToolSpec), ConfigProblem> {
    let mut base = json!({"name": "t", "description": "d", "path": "/x"});
    let Value::Object(extra) = v else { panic!("an object") };
    base.as_object_mut().unwrap().extend(extra);
    Plan::compile(&serde_json::from_value(base).unwrap(), "tools.t", None)
        .map_err(|p| p.into_iter().next().expect("a problem"))
}

fn schema(props: Value, required: Value) -> Value {
    let mut s = Map::new();
    s.insert("type".to_owned(), json!("object"));
    s.insert("properties".to_owned(), props);
    s.insert("required".to_owned(), required);
    Value::Object(s)
}

#[test]
fn prepares_path_query_headers_and_body() {
    let (plan, spec) = tool(json!({
        "method": "post",
        "path": "/orgs/{org}/items",
        "query": {"dry_run": "{dry}", "v": 2},
        "headers": {"X-Req": "id-{rid}"},
        "body": {"title": "{title}", "count": "{n}"},
        "input_schema": schema(
            json!({"org": {"type": "string"}, "dry": {"type": "boolean"}, "rid": {"type": "string"},
                   "title": {"type": "string"}, "n": {"type": "integer"}}),
            json!(["org"])),
    }))
    .unwrap();
    assert_eq!(spec.tool.name, "t");
    assert!(!plan.idempotent);
    let args = json!({"org": "a/b", "dry": true, "rid": "7", "title": "hi", "n": 3});
    let p = plan.prepare(args.as_object().unwrap()).unwrap();
    assert_eq!(p.path_and_query, "/orgs/a%2Fb/items?dry_run=true&v=2");
    assert_eq!(p.headers["x-req"], "id-7");
    assert_eq!(p.headers["content-type"], "application/json");
    let body: Value = serde_json::from_slice(p.body.as_ref().unwrap()).unwrap();
    assert_eq!(body, json!({"title": "hi", "count": 3}));

    let p = plan.prepare(json!({"org": "o"}).as_object().unwrap()).unwrap();
    assert_eq!(p.path_and_query, "/orgs/o/items?v=2");
    assert!(!p.headers.contains_key("x-req"));
}

#[test]
fn header_injection_is_refused() {
    let (plan, _) = tool(json!({
        "headers": {"X-Note": "{note}"},
        "input_schema": schema(json!({"note": {"type": "string"}}), json!([])),
    }))
    .unwrap();
    let e = plan.prepare(json!({"note": "a\r\nHost: evil"}).as_object().unwrap()).unwrap_err();
    assert!(matches!(e, AdapterError::InvalidArguments { field: Some(ref f), .. } if f == "note"));
}

#[test]
fn whole_arguments_body_and_idempotency_override() {
    let (plan, _) = tool(json!({"method": "POST", "body": "arguments", "idempotent": true,
        "input_schema": schema(json!({"a": {"type": "integer"}}), json!([]))}))
    .unwrap();
    assert!(plan.idempotent);
    let p = plan.prepare(json!({"a": 1}).as_object().unwrap()).unwrap();
    assert_eq!(p.body.as_deref(), Some(&b"{\"a\":1}"[..]));
    // Mass assignment: an undeclared property is refused, naming it, and never sent.
    let e = plan.prepare(json!({"a": 1, "is_admin": true}).as_object().unwrap()).unwrap_err();
    assert!(matches!(e, AdapterError::InvalidArguments { field: Some(ref f), .. } if f == "is_admin"), "{e:?}");
    // The schema opts out explicitly.
    let mut open = schema(json!({"a": {"type": "integer"}}), json!([]));
    open["additionalProperties"] = json!(true);
    let (plan, _) = tool(json!({"method": "POST", "body": "arguments", "input_schema": open})).unwrap();
    let p = plan.prepare(json!({"a": 1, "extra": 2}).as_object().unwrap()).unwrap();
    assert_eq!(p.body.as_deref(), Some(&b"{\"a\":1,\"extra\":2}"[..]));
    let (plan, _) = tool(json!({"method": "PUT", "idempotent": false})).unwrap();
    assert!(!plan.idempotent);
    let (plan, _) = tool(json!({"method": "DELETE"})).unwrap();
    assert!(plan.idempotent);
}

#[test]
fn load_errors_name_the_key() {
    let key = |v: Value| tool(v).unwrap_err().key;
    assert_eq!(key(json!({"method": "FETCH"})), "tools.t.method");
    assert_eq!(key(json!({"path": "/u/{id}"})), "tools.t.path");
    assert_eq!(
        key(json!({"path": "/u/{id}", "input_schema": schema(json!({"id": {"type": "string"}}), json!([]))})),
        "tools.t.path"
    );
    assert_eq!(key(json!({"query": {"q": "{nope}"}})), "tools.t.query");
    assert_eq!(key(json!({"headers": {"Host": "x"}})), "tools.t.headers");
    assert_eq!(key(json!({"headers": {"bad header": "x"}})), "tools.t.headers");
    assert_eq!(key(json!({"body": "arguments"})), "tools.t.body");
    assert_eq!(key(json!({"pathh": "/y"})), "tools.t.pathh");
    let cred = HeaderName::from_static("x-api-key");
    let raw =
        serde_json::from_value(json!({"name": "t", "description": "d", "path": "/", "headers": {"X-Api-Key": "k"}}));
    assert_eq!(
        Plan::compile(&raw.unwrap(), "tools.t", Some(&cred)).unwrap_err().iter().next().unwrap().key,
        "tools.t.headers"
    );
}
