//! Where in the tree an error of the config's deserialization is: serde buffers a flattened
//! table (an `[[adapters]]` entry, a declared tool's own keys) and loses the path of an error
//! inside it, so such an entry is read again, alone, to find it.

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::keys::Seg;
use super::raw::{AdapterKind, RawConfig};
use serde_path_to_error::Segment;

/// One deserialization of the whole tree: the raw config, or the first error with its path.
pub(super) fn deserialize(root: &Spanned<DeTable<'_>>) -> Result<RawConfig, (Vec<Seg>, String)> {
    let de = toml::de::Deserializer::from(root.clone());
    serde_path_to_error::deserialize::<_, RawConfig>(de)
        .map_err(|e| (segments(e.path()), e.inner().message().to_owned()))
}

fn segments(path: &serde_path_to_error::Path) -> Vec<Seg> {
    let mut out = Vec::new();
    for s in path.iter() {
        match s {
            Segment::Seq { index } => out.push(Seg::Index(*index)),
            Segment::Map { key } => out.push(Seg::Key(key.clone())),
            Segment::Enum { .. } => {}
            Segment::Unknown => break,
        }
    }
    out
}

/// serde buffers an `[[adapters]]` entry (a flattened, internally tagged enum) and loses the
/// path of any error inside it: deserialize that entry's settings again, alone, to find it.
pub(super) fn refine(root: &DeTable<'_>, (path, message): (Vec<Seg>, String)) -> (Vec<Seg>, String) {
    let [Seg::Key(section), Seg::Index(i)] = path.as_slice() else { return (path, message) };
    let Some(DeValue::Table(entry)) = (section == "adapters").then(|| root.get("adapters")).flatten().and_then(|a| {
        let DeValue::Array(a) = a.get_ref() else { return None };
        a.get(*i).map(Spanned::get_ref)
    }) else {
        return (path, message);
    };
    let Some(kind) = entry.get("kind").and_then(|k| k.get_ref().as_str()) else { return (path, message) };
    if message.starts_with("unknown variant") {
        return ([path, vec![Seg::Key("kind".into())]].concat(), message);
    }
    let mut settings = entry.clone();
    settings.remove("name");
    settings.remove("user_auth");
    settings.remove("kind");
    let Some((inner, message)) = locate(&settings, |de| AdapterKind::check_settings(kind, de)) else {
        return (path, message);
    };
    // The error sits at a declared tool: its keys are flattened as well, so read the kind's
    // part and the policy's again, alone.
    let [Seg::Key(tools), Seg::Index(j)] = inner.as_slice() else { return ([path, inner].concat(), message) };
    let tool = settings.get("tools").and_then(|t| match t.get_ref() {
        DeValue::Array(a) if tools == "tools" => a.get(*j).map(Spanned::get_ref),
        _ => None,
    });
    let Some(DeValue::Table(tool)) = tool else { return ([path, inner].concat(), message) };
    let found = locate(tool, |de| AdapterKind::check_tool(kind, de))
        .or_else(|| locate(tool, |de| <mcp_adapter_api::ToolPolicy as serde::Deserialize>::deserialize(de).map(drop)));
    match found {
        Some((at, message)) => ([path, inner, at].concat(), message),
        None => ([path, inner].concat(), message),
    }
}

/// Where in `table` `check` fails, and its message, when it does.
fn locate(
    table: &DeTable<'_>,
    check: impl FnOnce(serde_path_to_error::Deserializer<toml::de::ValueDeserializer<'_>>) -> Result<(), toml::de::Error>,
) -> Option<(Vec<Seg>, String)> {
    let mut track = serde_path_to_error::Track::new();
    let de = toml::de::ValueDeserializer::from(Spanned::new(0..0, DeValue::Table(table.clone())));
    check(serde_path_to_error::Deserializer::new(de, &mut track))
        .err()
        .map(|e| (segments(&track.path()), e.message().to_owned()))
}
