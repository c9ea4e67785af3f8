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
}
