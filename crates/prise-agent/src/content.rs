//! What the model reads of a tool's result: its text, its images apart, and a note in
//! place of what it cannot read or what is too long.

use prise_llm::Image;
use prise_mcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// Providers refuse larger images (Anthropic's limit is 5 MB each).
const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

/// A tool result for the model: text blocks as they are, the structured content when
/// there is no text, images apart (named in the text, for models that cannot see them),
/// and a note for anything else.
pub(crate) fn result_content(result: &CallToolResult) -> (String, Vec<Image>) {
    let mut parts = Vec::new();
    let mut images = Vec::new();
    for block in &result.content {
        parts.push(match block {
            ContentBlock::Text(text) => text.text.clone(),
            ContentBlock::Image(image) => image_note(&image.mime_type, &image.data, &mut images),
            ContentBlock::Audio(audio) => format!("[audio, {}]", audio.mime_type),
            ContentBlock::ResourceLink(link) => format!("[resource {}]", link.uri),
            ContentBlock::Resource(embedded) => {
                resource_text(&embedded.resource, true, &mut images)
            }
            _ => "[content of another kind]".to_owned(),
        });
    }
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    (parts.join("\n"), images)
}

/// A resource's contents for the model: its text (under its URI when `labelled`); an
/// image apart (see [`image_note`]); other binary contents named.
pub(crate) fn resource_text(
    contents: &ResourceContents,
    labelled: bool,
    images: &mut Vec<Image>,
) -> String {
    let label = |uri: &str| {
        if labelled {
            format!("[resource {uri}]\n")
        } else {
            String::new()
        }
    };
    match contents {
        ResourceContents::TextResourceContents { uri, text, .. } => {
            format!("{}{text}", label(uri))
        }
        ResourceContents::BlobResourceContents {
            uri,
            mime_type: Some(mime_type),
            blob,
            ..
        } if mime_type.starts_with("image/") => {
            format!("{}{}", label(uri), image_note(mime_type, blob, images))
        }
        ResourceContents::BlobResourceContents { uri, mime_type, .. } => format!(
            "[binary resource {uri}, {}]",
            mime_type.as_deref().unwrap_or("unknown type")
        ),
        _ => "[a resource of another kind]".to_owned(),
    }
}

/// Keeps an image (base64 `data`) for models that see, unless it is too large, and
/// returns the note that stands for it in the text.
fn image_note(mime_type: &str, data: &str, images: &mut Vec<Image>) -> String {
    let bytes = data.len() / 4 * 3;
    if bytes > MAX_IMAGE_BYTES {
        return format!(
            "[an image, {mime_type}, {} KiB: too large to pass on]",
            bytes / 1024
        );
    }
    images.push(Image {
        mime_type: mime_type.to_owned(),
        data: data.to_owned(),
    });
    format!("[an image, {mime_type}]")
}

/// Cuts `text` to `max` characters, saying so and, when `dir` is given, where the
/// whole text was saved.
pub(crate) fn cap(text: String, max: usize, dir: Option<&std::path::Path>) -> String {
    let total = text.chars().count();
    if total <= max {
        return text;
    }
    let saved = dir.and_then(|dir| {
        std::fs::create_dir_all(dir).ok()?;
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_nanos();
        let path = dir.join(format!("tool-output-{stamp}.txt"));
        std::fs::write(&path, &text).ok()?;
        Some(path)
    });
    let kept: String = text.chars().take(max).collect();
    match saved {
        Some(path) => format!(
            "{kept}\n[output cut: it was {total} characters; only the first {max} are shown. The whole output is saved in {}]",
            path.display()
        ),
        None => format!(
            "{kept}\n[output cut: it was {total} characters; only the first {max} are shown]"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::{MAX_IMAGE_BYTES, ResourceContents, cap, resource_text};

    fn contents(value: serde_json::Value) -> ResourceContents {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn image_resources_are_passed_on_and_other_blobs_named() {
        let mut images = Vec::new();
        let png = contents(
            serde_json::json!({"uri": "shot://1", "mimeType": "image/png", "blob": "iVBORw0KGgo="}),
        );
        assert_eq!(
            resource_text(&png, true, &mut images),
            "[resource shot://1]\n[an image, image/png]"
        );
        assert_eq!(images.len(), 1);
        assert_eq!(images[0].data, "iVBORw0KGgo=");
        let huge = contents(
            serde_json::json!({"uri": "shot://2", "mimeType": "image/png",
            "blob": "A".repeat(MAX_IMAGE_BYTES / 3 * 4 + 8)}),
        );
        assert!(resource_text(&huge, false, &mut images).contains("too large to pass on"));
        let zip = contents(
            serde_json::json!({"uri": "f://a.zip", "mimeType": "application/zip", "blob": "UEsDBA=="}),
        );
        assert_eq!(
            resource_text(&zip, false, &mut images),
            "[binary resource f://a.zip, application/zip]"
        );
        assert_eq!(images.len(), 1, "only the first image is kept");
        let text = contents(serde_json::json!({"uri": "notes://a", "text": "hello"}));
        assert_eq!(resource_text(&text, false, &mut images), "hello");
        assert_eq!(
            resource_text(&text, true, &mut images),
            "[resource notes://a]\nhello"
        );
    }

    #[test]
    fn long_outputs_are_cut_with_a_note() {
        assert_eq!(cap("short".into(), 10, None), "short");
        let cut = cap("x".repeat(50), 10, None);
        assert!(cut.starts_with(&"x".repeat(10)));
        assert!(cut.ends_with("[output cut: it was 50 characters; only the first 10 are shown]"));
    }

    #[test]
    fn the_whole_output_is_saved_where_the_note_says() {
        let dir = std::env::temp_dir().join(format!("prise-cap-{}", std::process::id()));
        let cut = cap(format!("{}END", "y".repeat(100)), 10, Some(&dir));
        let path = cut
            .rsplit_once("saved in ")
            .unwrap()
            .1
            .trim_end_matches(']');
        assert_eq!(
            std::fs::read_to_string(path).unwrap(),
            format!("{}END", "y".repeat(100))
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
