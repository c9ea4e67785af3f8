//! Content blocks (MCP 2026-07-28 server/tools § Content) and resource contents (MCP 2026-07-28 server/resources).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Optional hints on a content block.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the content is for: `"user"` and/or `"assistant"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<String>>,
    /// 0..1; 1 means effectively required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// ISO 8601 timestamp.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

/// One block of a tool result or prompt message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
        /// Hints.
        #[serde(skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// A base64 image.
    Image {
        /// Base64 bytes.
        data: String,
        /// e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Hints.
        #[serde(skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// Base64 audio.
    Audio {
        /// Base64 bytes.
        data: String,
        /// e.g. `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Hints.
        #[serde(skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// A link to a resource the client may read.
    ResourceLink {
        /// Resource URI.
        uri: String,
        /// Resource name.
        name: String,
        /// Description.
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// MIME type.
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Hints.
        #[serde(skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// An embedded resource.
    Resource {
        /// The embedded contents.
        resource: ResourceContents,
        /// Hints.
        #[serde(skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
}

impl ContentBlock {
    /// A text block without annotations.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into(), annotations: None }
    }

    /// An image block.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Image { data: data.into(), mime_type: mime_type.into(), annotations: None }
    }

    /// An audio block.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Audio { data: data.into(), mime_type: mime_type.into(), annotations: None }
    }

    /// An embedded resource block.
    pub fn resource(resource: ResourceContents) -> Self {
        Self::Resource { resource, annotations: None }
    }
}

/// The contents of a resource: text or base64 blob (`TextResourceContents` / `BlobResourceContents`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceContents {
    /// The resource URI.
    pub uri: String,
    /// MIME type.
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Text or blob.
    #[serde(flatten)]
    pub body: ResourceBody,
    /// Extra metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// Text or base64 bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResourceBody {
    /// UTF-8 text.
    Text(String),
    /// Base64-encoded bytes.
    Blob(String),
}

impl ResourceContents {
    /// Text contents.
    pub fn text(uri: impl Into<String>, mime_type: Option<&str>, text: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            body: ResourceBody::Text(text.into()),
            meta: None,
        }
    }

    /// Base64 blob contents.
    pub fn blob(uri: impl Into<String>, mime_type: Option<&str>, base64: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            body: ResourceBody::Blob(base64.into()),
            meta: None,
        }
    }
}
