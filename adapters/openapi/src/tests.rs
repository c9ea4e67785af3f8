//! The import end to end on a small document: names, schemas, selection, security, report.

use mcp_adapter_api::{Adapter as _, BuildContext};
use serde_json::{Value, json};

use super::*;

const PETSTORE: &str = r##"
openapi: 3.0.3
info: {title: Pets, version: "1"}
servers: [{url: "http://{host}:4010/v1", variables: {host: {default: 127.0.0.1}}}]
security: [{key: []}]
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-Api-Key}
    oauth: {type: oauth2, flows: {}}
  schemas:
    Pet:
      allOf:
        - $ref: '#/components/schemas/New'
        - type: object
          required: [id]
          properties: {id: {type: integer, format: int64}}
    New:
      type: object
      required: [name]
      properties:
        name: {type: string, nullable: true}
        parent: {$ref: '#/components/schemas/Pet'}
paths:
  /pets:
    parameters:
      - {name: limit, in: query, schema: {type: integer, maximum: 100}}
    get:
      operationId: listPets
      tags: [pets]
      summary: List pets
      parameters:
        - {name: X-Trace, in: header, schema: {type: string}}
        - {name: Accept, in: header, schema: {type: string}}
    post:
      operationId: createPet
      tags: [pets]
      requestBody:
        required: true
        content: {application/json: {schema: {$ref: '#/components/schemas/New'}}}
  /pets/{petId}:
    get:
      operationId: show pet by id!
      security: [{oauth: []}]
      parameters: [{name: petId, in: path, required: true, schema: {type: string}}]
    delete:
      security: []
      parameters: [{name: petId, in: path, required: true, schema: {type: string}}]
    trace: {}
"##;

fn docs() -> Documents {
    let value = source::parse(PETSTORE.as_bytes()).unwrap();
    Documents::from_value(url::Url::parse("file:///pets.yaml").unwrap(), value)
}

fn config(extra: Value) -> OpenApiConfig {
    let mut base = json!({"spec": "/pets.yaml", "credentials": {"key": {"secret_env": "PET_KEY"}}});
    base.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    serde_json::from_value(base).unwrap()
}

fn cx() -> BuildContext {
    BuildContext::with_env([("PET_KEY", "k")].into_iter().collect())
}

#[tokio::test]
async fn operations_become_tools_with_valid_schemas() {
    let adapter = OpenApi::from_documents(&config(json!({})), &docs(), &cx()).unwrap();
    let catalog = adapter.catalog();
    let names: Vec<&str> = catalog.tools.iter().map(|t| t.tool.name.as_str()).collect();
    assert_eq!(names, ["listPets", "createPet", "delete_pets_petId"]);
    let report = adapter.report();
    assert_eq!((report.operations, report.tools), (5, 3));
    let why: Vec<&str> = report
        .left_out
        .iter()
        .map(|(op, why)| if op.starts_with("GET") { why.as_str() } else { op.as_str() })
        .collect();
    assert!(why.iter().any(|w| w.contains("credentials.oauth")), "{why:?}");
    assert!(why.contains(&"TRACE /pets/{petId}"));
    let list = &catalog.tools[0].tool;
    assert_eq!(list.input_schema["properties"]["limit"]["maximum"], 100);
    assert!(list.input_schema["properties"].get("Accept").is_none(), "Accept is the client's");
    assert_eq!(list.annotations.as_ref().unwrap().read_only_hint, Some(true));
    let create = &catalog.tools[1].tool.input_schema;
    assert_eq!(create["required"], json!(["body"]));
    assert_eq!(create["properties"]["body"], json!({"$ref": "#/$defs/New"}));
    // allOf merged, recursion kept as a reference, 3.0 nullable translated.
    assert_eq!(create["$defs"]["Pet"]["required"], json!(["name", "id"]));
    assert_eq!(create["$defs"]["New"]["properties"]["parent"], json!({"$ref": "#/$defs/Pet"}));
    assert_eq!(create["$defs"]["New"]["properties"]["name"]["type"], json!(["string", "null"]));
    for t in &catalog.tools {
        assert!(jsonschema::draft202012::meta::is_valid(&t.tool.input_schema), "{}", t.tool.name);
        assert!(names::is_valid(&t.tool.name));
    }
    assert!(adapter.report.tools_list_bytes > 500);
    assert!(Adapter::report(&adapter).unwrap().starts_with("operations found: 5, tools made: 3"));
}

#[tokio::test]
async fn selection_and_read_only() {
    let only = |extra| {
        let a = OpenApi::from_documents(&config(extra), &docs(), &cx()).unwrap();
        a.catalog().tools.into_iter().map(|t| t.tool.name).collect::<Vec<_>>()
    };
    assert_eq!(only(json!({"read_only": true})), ["listPets"]);
    assert_eq!(only(json!({"include": {"tags": ["pets"], "methods": ["post"]}})), ["createPet"]);
    assert_eq!(only(json!({"exclude": {"paths": ["/pets/*"]}})), ["listPets", "createPet"]);
    assert_eq!(only(json!({"exclude": {"operations": ["listPets", "createPet"]}})), ["delete_pets_petId"]);
}

#[tokio::test]
async fn bad_configs_name_the_key() {
    let key = |c: OpenApiConfig, env: BuildContext| {
        OpenApi::from_documents(&c, &docs(), &env).unwrap_err().iter().next().unwrap().key.clone()
    };
    assert_eq!(key(config(json!({})), BuildContext::default()), "credentials.key.secret_env");
    assert_eq!(key(config(json!({"credentials": {"nope": {"secret_env": "PET_KEY"}}})), cx()), "credentials.nope");
    assert_eq!(key(config(json!({"http": {"tools": [{"name": "x", "description": "d", "path": "/"}]}})), cx()), "http");
    let swagger = Documents::from_value(url::Url::parse("file:///s.json").unwrap(), json!({"swagger": "2.0"}));
    let e = OpenApi::from_documents(&config(json!({})), &swagger, &cx()).unwrap_err();
    assert!(e.to_string().starts_with("spec: this is a Swagger 2.0 document"), "{e}");
    let e = OpenApi::load(&config(json!({"spec": "/no/such/file.yaml"})), &cx()).await.unwrap_err();
    assert_eq!(e.iter().next().unwrap().key, "spec");
    let e = OpenApi::load(&config(json!({"max_spec_bytes": 0})), &cx()).await.unwrap_err();
    assert_eq!(e.iter().next().unwrap().key, "max_spec_bytes");
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("pets.yaml");
    std::fs::write(&spec, PETSTORE).unwrap();
    let e = OpenApi::load(&config(json!({"spec": spec.to_str().unwrap(), "max_spec_bytes": 100})), &cx())
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("spec: the document and the files it references come to more than max_spec_bytes = 100 bytes"),
        "{e}"
    );
}

/// OpenAPI 3.1 identification (issue 30 item 3): `$ref`s through `$id` and `$anchor`
/// resolve; an operation whose `$ref` points nowhere is left out with the reason, the others
/// load.
const IDS: &str = r##"
openapi: 3.1.0
info: {title: Ids, version: "1"}
servers: [{url: "http://127.0.0.1:9"}]
components:
  schemas:
    petdetails:
      $id: /components/schemas/petdetails
      type: object
      properties:
        name: {$anchor: pet_details_id, type: string, maxLength: 20}
        tag: {$ref: '#tag'}
        owner: {$ref: owner}
      $defs:
        tag: {$anchor: tag, type: string, enum: [a, b]}
    owner:
      $id: /components/schemas/owner
      type: object
      properties: {id: {type: integer, minimum: -9223372036854776000}}
    Broken:
      type: object
      properties: {x: {$ref: 'https://elsewhere.example/x.json'}}
paths:
  /pets/{name}:
    get:
      operationId: showPet
      parameters:
        - {name: name, in: path, required: true, schema: {$ref: '/components/schemas/petdetails#pet_details_id'}}
  /pets:
    post:
      operationId: createPet
      requestBody: {content: {application/json: {schema: {$ref: '/components/schemas/petdetails'}}}}
  /nowhere:
    get:
      operationId: noAnchor
      parameters: [{name: q, in: query, schema: {$ref: '/components/schemas/petdetails#no_such_anchor'}}]
  /broken:
    get:
      operationId: broken
      parameters: [{name: q, in: query, schema: {$ref: '#/components/schemas/Broken'}}]
    put:
      operationId: brokenAgain
      requestBody: {content: {application/json: {schema: {allOf: [{$ref: '#/components/schemas/Broken'}]}}}}
"##;

#[tokio::test]
async fn refs_through_id_and_anchor_resolve_and_unresolvable_ones_leave_their_operation_out() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ids.yaml");
    std::fs::write(&path, IDS).unwrap();
    let config: OpenApiConfig = serde_json::from_value(json!({"spec": path.to_str().unwrap()})).unwrap();
    let adapter = OpenApi::load(&config, &BuildContext::default()).await.unwrap();
    let catalog = adapter.catalog();
    let mut names: Vec<&str> = catalog.tools.iter().map(|t| t.tool.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["createPet", "showPet"]);
    let tool = |n: &str| &catalog.tools.iter().find(|t| t.tool.name == n).unwrap().tool.input_schema;
    let show = tool("showPet");
    let name = show["properties"]["name"]["$ref"].as_str().unwrap().trim_start_matches("#/$defs/");
    assert_eq!(show["$defs"][name]["maxLength"], 20);
    let create = tool("createPet");
    let pet = &create["$defs"]["petdetails"];
    assert_eq!(pet["properties"]["tag"], json!({"$ref": "#/$defs/tag"}));
    assert_eq!(create["$defs"]["tag"]["enum"], json!(["a", "b"]));
    assert_eq!(create["$defs"]["owner"]["properties"]["id"]["minimum"].as_f64(), Some(-9.223_372_036_854_776e18));
    for t in &catalog.tools {
        assert!(jsonschema::draft202012::meta::is_valid(&t.tool.input_schema), "{}", t.tool.name);
        assert!(jsonschema::validator_for(&t.tool.input_schema).is_ok(), "{}", t.tool.name);
    }
    let report = adapter.report();
    assert_eq!((report.operations, report.tools), (5, 2));
    let why = |op: &str| report.left_out.iter().find(|(o, _)| o == op).map(|(_, w)| w.as_str()).unwrap_or_default();
    assert!(
        why("GET /nowhere").starts_with(
            "$ref '/components/schemas/petdetails#no_such_anchor' cannot be resolved: no $anchor 'no_such_anchor'"
        ),
        "{report}"
    );
    for op in ["GET /broken", "PUT /broken"] {
        assert!(why(op).contains("'https://elsewhere.example/x.json' cannot be resolved"), "{op}: {report}");
        assert!(why(op).contains("another origin"), "{op}: {report}");
    }
}

/// Issue 30 item 2: a YAML integer beyond 64 bits refused the whole document.
#[tokio::test]
async fn integers_beyond_64_bits_are_read_as_floats() {
    let doc = "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: 'http://127.0.0.1:9'}]\npaths:\n  /n:\n    get:\n      operationId: n\n      parameters: [{name: n, in: query, schema: {type: integer, minimum: -9223372036854776000, maximum: 99999999999999999999}}]\n";
    let docs =
        Documents::from_value(url::Url::parse("file:///n.yaml").unwrap(), source::parse(doc.as_bytes()).unwrap());
    let adapter = OpenApi::from_documents(&config_for("/n.yaml"), &docs, &BuildContext::default()).unwrap();
    let schema = &adapter.catalog().tools[0].tool.input_schema;
    assert_eq!(schema["properties"]["n"]["minimum"].as_f64(), Some(-9.223_372_036_854_776e18));
    assert_eq!(schema["properties"]["n"]["maximum"].as_f64(), Some(1e20));
}

fn config_for(spec: &str) -> OpenApiConfig {
    serde_json::from_value(json!({"spec": spec})).unwrap()
}

/// Issue 30 item 8: an empty array path parameter made an empty segment (`/items/A/`).
#[tokio::test]
async fn an_empty_array_path_value_is_refused_like_an_empty_string() {
    use mcp_adapter_api::{AdapterError, CallContext, ToolCall};
    let docs = Documents::from_value(
        url::Url::parse("file:///items.json").unwrap(),
        json!({"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "servers": [{"url": "http://127.0.0.1:9"}],
               "paths": {"/items/{id}/{ids}": {"delete": {"operationId": "del", "parameters": [
                   {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}},
                   {"name": "ids", "in": "path", "required": true, "schema": {"type": "array", "items": {"type": "string"}}}]}}}}),
    );
    let adapter = OpenApi::from_documents(&config_for("/items.json"), &docs, &BuildContext::default()).unwrap();
    for ids in [json!([]), json!([""])] {
        let args = json!({"id": "A", "ids": ids});
        let call = ToolCall { name: "del", arguments: args.as_object().unwrap(), input: Default::default() };
        let cx = CallContext::detached(std::time::Duration::from_secs(5));
        match adapter.call_tool(call, &cx).await {
            Err(AdapterError::InvalidArguments { field, message }) => {
                assert_eq!(field.as_deref(), Some("ids"));
                assert!(
                    message.ends_with("is not allowed as a path value (empty, '.' and '..' would change the path)"),
                    "{message}"
                );
            }
            other => panic!("{ids}: {other:?}"),
        }
    }
}

/// Issue 30 item 7: the operation's servers, else its path item's, else the root's; a
/// config's `http.base_urls` (the import without `servers`) takes every operation.
#[test]
fn operation_servers_come_before_path_servers_and_yield_to_http_base_urls() {
    let docs = Documents::from_value(
        url::Url::parse("https://api.example.com/openapi.json").unwrap(),
        json!({"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "servers": [{"url": "/v2"}],
               "paths": {
                   "/a": {"servers": [{"url": "https://{region}.example.com/v1", "variables": {"region": {"default": "eu"}}}],
                          "get": {"operationId": "pathLevel"},
                          "post": {"operationId": "opLevel", "servers": [{"url": "/legacy"}, {"url": "/other"}]},
                          "put": {"operationId": "odd", "servers": [{"url": "ftp://files.example.com"}]}},
                   "/b": {"get": {"operationId": "root", "servers": []}}}}),
    );
    let credentials = security::Configured::default();
    let options =
        |servers| Options { max_description_chars: 100, max_schema_bytes: 1 << 16, servers, ..Options::default() };
    let Imported { tools, report } = import::import(&docs, &options(true), &credentials).unwrap();
    let server =
        |name: &str| tools.iter().find(|(_, s)| s.tool.name == name).map(|(p, _)| p.server().map(str::to_owned));
    assert_eq!(server("pathLevel"), Some(Some("https://eu.example.com/v1".to_owned())));
    assert_eq!(server("opLevel"), Some(Some("https://api.example.com/legacy".to_owned())));
    assert_eq!(server("root"), Some(None), "an empty list overrides nothing");
    assert_eq!(server("odd"), None);
    assert!(report.left_out.iter().any(|(op, why)| op == "PUT /a" && why.contains("'ftp://files.example.com'")));
    let Imported { tools, .. } = import::import(&docs, &options(false), &credentials).unwrap();
    assert!(tools.iter().all(|(p, _)| p.server().is_none()), "http.base_urls takes every operation");
}
