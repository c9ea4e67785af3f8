//! Paths, parameters and bodies written as OpenAPI 3.1 § 4.8.12.4 (Style Values) shows them.

use std::collections::BTreeMap;

use serde_json::json;

use super::*;

fn param(name: &str, location: Location, style: Style, explode: bool) -> Param {
    Param {
        name: name.to_owned(),
        argument: name.to_owned(),
        location,
        style,
        explode,
        allow_reserved: false,
        content: None,
    }
}

fn run(op: &Operation, args: Value) -> (String, HeaderMap, Option<Bytes>) {
    op.prepare(args.as_object().unwrap()).unwrap()
}

#[test]
fn path_styles_follow_the_spec_examples() {
    let v = json!({"id": [3, 4, 5]});
    let cases = [
        (Style::Simple, false, "/u/3,4,5"),
        (Style::Label, false, "/u/.3,4,5"),
        (Style::Label, true, "/u/.3.4.5"),
        (Style::Matrix, false, "/u/;id=3,4,5"),
        (Style::Matrix, true, "/u/;id=3;id=4;id=5"),
    ];
    for (style, explode, want) in cases {
        let op = Operation::new("/u/{id}", vec![param("id", Location::Path, style, explode)], None, vec![]).unwrap();
        assert_eq!(run(&op, v.clone()).0, want, "{style:?} explode={explode}");
    }
    let op = Operation::new("/u/{id}", vec![param("id", Location::Path, Style::Simple, true)], None, vec![]).unwrap();
    assert_eq!(run(&op, json!({"id": {"role": "admin", "n": 5}})).0, "/u/n=5,role=admin");
    assert_eq!(run(&op, json!({"id": "a/b?c"})).0, "/u/a%2Fb%3Fc");
    let e = op.prepare(json!({"id": ".."}).as_object().unwrap()).unwrap_err();
    assert!(matches!(e, AdapterError::InvalidArguments { .. }));
}

#[test]
fn empty_arrays_and_objects_are_refused_like_empty_strings() {
    for style in [Style::Simple, Style::Label, Style::Matrix] {
        let op = Operation::new(
            "/items/{id}/{ids}",
            vec![param("id", Location::Path, style, false), param("ids", Location::Path, style, false)],
            None,
            vec![],
        )
        .unwrap();
        for empty in [json!([]), json!({}), json!([""]), json!("")] {
            let e = op.prepare(json!({"id": "A", "ids": empty}).as_object().unwrap()).unwrap_err();
            assert!(
                e.to_string().contains("is not allowed as a path value (empty, '.' and '..' would change the path)"),
                "{style:?} {empty}: {e}"
            );
        }
    }
}

#[test]
fn reserved_expansion_keeps_slashes_but_never_dot_segments() {
    let op =
        Operation::new("/v1/{+name}:cancel", vec![param("name", Location::Path, Style::Simple, false)], None, vec![])
            .unwrap();
    assert_eq!(run(&op, json!({"name": "projects/p 1/ops/7"})).0, "/v1/projects/p%201/ops/7:cancel");
    assert!(op.prepare(json!({"name": "projects/../admin"}).as_object().unwrap()).is_err());
}

#[test]
fn query_cookie_and_header_parameters() {
    let op = Operation::new(
        "/s",
        vec![
            param("tag", Location::Query, Style::Form, true),
            param("ids", Location::Query, Style::Form, false),
            param("p", Location::Query, Style::PipeDelimited, false),
            param("f", Location::Query, Style::DeepObject, true),
            param("sess", Location::Cookie, Style::Form, false),
            param("X-Trace", Location::Header, Style::Simple, false),
        ],
        None,
        vec![Credential::Query("api_key".into(), Secret::new(b"k&1".to_vec()))],
    )
    .unwrap();
    let (pq, h, _) = run(
        &op,
        json!({"tag": ["a", "b c"], "ids": [1, 2], "p": ["x", "y"], "f": {"min": 1}, "sess": "s1", "X-Trace": ["t", "u"]}),
    );
    assert_eq!(pq, "/s?tag=a&tag=b%20c&ids=1,2&p=x|y&f[min]=1&api_key=k%261");
    assert_eq!(h["cookie"], "sess=s1");
    assert_eq!(h["x-trace"], "t,u");
    let e = op.prepare(json!({"X-Trace": "a\r\nHost: evil"}).as_object().unwrap()).unwrap_err();
    assert!(matches!(e, AdapterError::InvalidArguments { field: Some(ref f), .. } if f == "X-Trace"));
}

#[test]
fn bodies_in_each_encoding() {
    let body = |encoding, ct: &str| {
        let b = BodyParam { argument: "body".into(), encoding, content_type: ct.into(), parts: BTreeMap::new() };
        Operation::new("/b", vec![], Some(b), vec![]).unwrap()
    };
    let args = json!({"body": {"name": "a b", "tags": ["x", "y"], "meta": {"k": 1}}});
    let (_, h, b) = run(&body(Encoding::Form, "application/x-www-form-urlencoded"), args.clone());
    assert_eq!(h["content-type"], "application/x-www-form-urlencoded");
    // An object property with no encoding entry is written deepObject (docs/adapters/openapi.md).
    assert_eq!(b.unwrap(), "meta[k]=1&name=a%20b&tags=x&tags=y");
    let (_, h, b) = run(&body(Encoding::Multipart, "multipart/form-data"), args.clone());
    let ct = h["content-type"].to_str().unwrap();
    let boundary = ct.strip_prefix("multipart/form-data; boundary=").unwrap();
    let text = String::from_utf8(b.unwrap().to_vec()).unwrap();
    assert!(text.starts_with(&format!("--{boundary}\r\nContent-Disposition: form-data; name=\"meta\"")), "{text}");
    assert_eq!(text.matches("name=\"tags\"").count(), 2);
    assert!(text.ends_with(&format!("--{boundary}--\r\n")));
    let (_, h, b) = run(&body(Encoding::Json, "application/json"), args);
    assert_eq!(h["content-type"], "application/json");
    assert_eq!(serde_json::from_slice::<Value>(&b.unwrap()).unwrap()["name"], "a b");
    let e = body(Encoding::Form, "application/x-www-form-urlencoded").prepare(json!({"body": 3}).as_object().unwrap());
    assert!(e.is_err());
}

#[test]
fn unbound_template_variables_are_refused() {
    assert!(Operation::new("/u/{id}", vec![], None, vec![]).is_err());
    assert!(Operation::new("/u", vec![param("id", Location::Path, Style::Simple, false)], None, vec![]).is_err());
    assert!(format!("{:?}", Credential::header("X-Key", "s3cr3t").unwrap()).contains("redacted"));
}

fn with_parts(encoding: Encoding, ct: &str, parts: &[(&str, PartEncoding)]) -> Operation {
    let parts = parts.iter().map(|(k, p)| ((*k).to_owned(), p.clone())).collect();
    let b = BodyParam { argument: "body".into(), encoding, content_type: ct.into(), parts };
    Operation::new("/b", vec![], Some(b), vec![]).unwrap()
}

#[test]
fn a_form_body_follows_its_encoding_object() {
    // OpenAPI 3.1 § 4.8.15.1: style, explode and allowReserved per property, as for a query.
    let deep = PartEncoding { style: Some(Style::DeepObject), explode: Some(true), ..PartEncoding::default() };
    let pipes = PartEncoding { style: Some(Style::PipeDelimited), explode: Some(false), ..PartEncoding::default() };
    let flat = PartEncoding { style: Some(Style::Form), explode: Some(false), ..PartEncoding::default() };
    let reserved = PartEncoding { allow_reserved: true, ..PartEncoding::default() };
    let op = with_parts(
        Encoding::Form,
        "application/x-www-form-urlencoded",
        &[("address", deep), ("ids", pipes), ("point", flat), ("next", reserved)],
    );
    let args = json!({"body": {
        "address": {"city": "Paris"}, "metadata": {"order": "42"}, "ids": [1, 2],
        "point": {"x": 1, "y": 2}, "next": "/a?b", "gone": null,
    }});
    let (_, _, b) = run(&op, args);
    assert_eq!(b.unwrap(), "address[city]=Paris&ids=1|2&metadata[order]=42&next=/a%3Fb&point=x,1,y,2");
}

#[test]
fn a_multipart_part_carries_its_declared_content_type() {
    let png = PartEncoding { content_type: Some("image/png, image/jpeg".into()), ..PartEncoding::default() };
    let bad = PartEncoding { content_type: Some("text/plain\r\nX-Evil: 1".into()), ..PartEncoding::default() };
    let op = with_parts(Encoding::Multipart, "multipart/form-data", &[("photo", png), ("note", bad)]);
    let (_, h, b) = run(&op, json!({"body": {"photo": "PNG", "note": "n", "meta": {"k": 1}}}));
    let boundary =
        h["content-type"].to_str().unwrap().strip_prefix("multipart/form-data; boundary=").unwrap().to_owned();
    let part = |name: &str, ct: &str, data: &str| {
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\nContent-Type: {ct}\r\n\r\n{data}\r\n"
        )
    };
    let want = [
        part("meta", "application/json", r#"{"k":1}"#),
        part("note", "text/plain; charset=utf-8", "n"),
        part("photo", "image/png", "PNG"),
        format!("--{boundary}--\r\n"),
    ]
    .concat();
    assert_eq!(String::from_utf8(b.unwrap().to_vec()).unwrap(), want);
}

#[test]
fn a_content_parameter_is_one_value_of_json_text() {
    // OpenAPI 3.1 § 4.8.12.2: `content` instead of `schema`; never exploded into properties.
    let mut q = param("q", Location::Query, Style::Form, true);
    q.content = Some("application/json".into());
    let mut h = param("X-Filter", Location::Header, Style::Simple, false);
    h.content = Some("application/json".into());
    let mut t = param("t", Location::Query, Style::Form, true);
    t.content = Some("text/plain".into());
    let op = Operation::new("/s", vec![q, h, t], None, vec![]).unwrap();
    let (pq, headers, _) = run(&op, json!({"q": {"term": "x"}, "X-Filter": {"a": [1]}, "t": "a b"}));
    assert_eq!(pq, "/s?q=%7B%22term%22%3A%22x%22%7D&t=a%20b");
    assert_eq!(headers["x-filter"], r#"{"a":[1]}"#);
}
