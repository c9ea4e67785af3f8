"""Writes a runtime config serving N CLI tools with realistic input schemas (loadtest/scale.sh).

Each tool has its own name, title and description; its input schema is one of a few shapes
an imported API produces (ids, enums, paging, free text, nested filters), with property
descriptions, so the catalog is as heavy as a real one. Tools of one shape share the schema
bytes, as operations of one API that take the same parameters do.

Usage: python3 loadtest/lib/gen_tools.py N > config.toml
"""

import json
import sys

SHAPES = [
    {"type": "object", "required": ["id"], "additionalProperties": False, "properties": {
        "id": {"type": "string", "description": "Identifier of the record.", "minLength": 1, "maxLength": 64},
        "fields": {"type": "array", "items": {"type": "string"}, "description": "Fields to return."}}},
    {"type": "object", "additionalProperties": False, "properties": {
        "query": {"type": "string", "description": "Free-text search.", "maxLength": 256},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20, "description": "Page size."},
        "cursor": {"type": "string", "description": "Opaque cursor of the next page."},
        "sort": {"type": "string", "enum": ["created", "updated", "name"], "description": "Sort order."}}},
    {"type": "object", "required": ["name", "region"], "additionalProperties": False, "properties": {
        "name": {"type": "string", "pattern": "^[a-z][a-z0-9-]{0,62}$", "description": "Resource name."},
        "region": {"type": "string", "enum": ["eu-west-1", "us-east-1", "ap-south-1"], "description": "Region."},
        "tags": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Labels."},
        "dry_run": {"type": "boolean", "description": "Validate only."}}},
    {"type": "object", "required": ["filter"], "additionalProperties": False, "properties": {
        "filter": {"type": "object", "description": "Conditions, all of which must hold.", "properties": {
            "status": {"type": "string", "enum": ["open", "closed", "any"]},
            "since": {"type": "string", "format": "date-time", "description": "RFC 3339 lower bound."},
            "owner": {"type": "string", "description": "User name."}}},
        "include_archived": {"type": "boolean"}}},
    {"type": "object", "required": ["text"], "additionalProperties": False, "properties": {
        "text": {"type": "string", "description": "The text to process.", "maxLength": 100000},
        "language": {"type": "string", "description": "BCP 47 tag.", "default": "en"}}},
]


def toml_str(s):
    return json.dumps(s)


def main():
    n = int(sys.argv[1])
    out = ['[server]', 'name = "mcp-runtime-scale"', '']
    out += ['[[adapters]]', 'name = "scale"', 'kind = "cli"', '']
    for i in range(n):
        shape = SHAPES[i % len(SHAPES)]
        name = f"op_{i:05d}"
        out += ['[[adapters.tools]]', f'name = "{name}"', f'title = "Operation {i}"',
                f'description = {toml_str(f"Operation number {i} of the generated catalog: reads or changes one kind of record in the example API and returns it as JSON.")}',
                'executable = "true"', 'annotations = { readOnlyHint = true, openWorldHint = false }',
                f'input_schema = {toml_inline(shape)}', '']
    sys.stdout.write("\n".join(out))


def toml_inline(v):
    """JSON value -> TOML inline value (objects as inline tables)."""
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml_inline(x)}" for k, x in v.items()) + " }"
    if isinstance(v, list):
        return "[" + ", ".join(toml_inline(x) for x in v) + "]"
    if isinstance(v, bool):
        return "true" if v else "false"
    return json.dumps(v)


if __name__ == "__main__":
    main()
