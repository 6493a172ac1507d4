//! Where a request's objects are kept in the object store: its recording and its rendered result.

use analytics_store::RequestRow;

/// Where a request's audio is kept: beside the call's transcript for a folder upload (so deleting the
/// call removes it), under the company's `_requests/` otherwise (no organization name starts with `_`).
pub fn audio_key(row: &RequestRow, extension: &str) -> String {
    format!("{}audio.{extension}", object_prefix(row))
}

/// Where a request's rendered result is kept, for a caller that reads it later.
pub fn result_key(row: &RequestRow, extension: &str) -> String {
    format!("{}result.{extension}", object_prefix(row))
}

fn object_prefix(row: &RequestRow) -> String {
    if row.folder.is_empty() {
        format!("{}/_requests/{}/", row.company, row.id)
    } else {
        format!(
            "{}/{}/{}/{}/",
            row.company, row.organization, row.folder, row.call_id
        )
    }
}

/// The extension an audio key keeps from the uploaded name: letters and digits only, at most 8, else
/// `bin` (the decoder reads the content, the name is only a hint).
pub fn audio_extension(file_name: &str) -> String {
    let ext = file_name
        .rsplit_once('.')
        .map(|(_, ext)| ext.to_ascii_lowercase())
        .unwrap_or_default();
    if (1..=8).contains(&ext.len()) && ext.bytes().all(|b| b.is_ascii_alphanumeric()) {
        ext
    } else {
        "bin".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audio_keeps_a_safe_extension_only() {
        assert_eq!(audio_extension("Call 7.WAV"), "wav");
        assert_eq!(audio_extension("x.mp3"), "mp3");
        assert_eq!(audio_extension("noext"), "bin");
        assert_eq!(audio_extension("a.../etc/passwd"), "bin");
        assert_eq!(audio_extension("a.verylongextension"), "bin");
    }
}
