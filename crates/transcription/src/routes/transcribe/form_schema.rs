//! The documented shapes of the upload forms (docs/transcription.md, The form). The form is read part by
//! part as it streams (`read_form`), never into one typed value, so these types exist for the OpenAPI
//! document, with the rules `Form::asked` applies to each text field: names of output formats and
//! yes/no words in any case, white space at either end ignored, an empty field as one left out.

use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Schema, Type};
use utoipa::openapi::{KnownFormat, RefOr, SchemaFormat};
use utoipa::{PartialSchema, ToSchema};

/// `output`: json, text (txt), srt, vtt (webvtt), in any case.
const OUTPUT: &str = r"^\s*(|[jJ][sS][oO][nN]|[tT][eE][xX][tT]|[tT][xX][tT]|[sS][rR][tT]|[vV][tT][tT]|[wW][eE][bB][vV][tT][tT])\s*$";
/// `diarize`: true, false, 1, 0, yes, no, in any case.
const DIARIZE: &str = r"^\s*(|[tT][rR][uU][eE]|[fF][aA][lL][sS][eE]|1|0|[yY][eE][sS]|[nN][oO])\s*$";
/// `attempts`: a whole number from 1 to 1000.
const ATTEMPTS: &str = r"^\s*(|\+?0*([1-9][0-9]{0,2}|1000))\s*$";

fn form(metadata: bool) -> RefOr<Schema> {
    let text = |description: &str| {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(description.to_string()))
    };
    let patterned = |description: &str, pattern: &str| text(description).pattern(Some(pattern));
    let mut form = ObjectBuilder::new()
        .property(
            "file",
            text("The recording; for a folder upload also a transcript JSON")
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::Binary))),
        )
        .required("file")
        .property(
            "token",
            text("The access token, when it is not in the query or a bearer header"),
        )
        .property(
            "output",
            patterned("json (default), text or txt, srt, vtt or webvtt", OUTPUT),
        )
        .property(
            "callback",
            text("An http or https address that receives the result")
                .format(Some(SchemaFormat::Custom("uri".into()))),
        )
        .property(
            "attempts",
            patterned(
                "Callback attempts at most, 1 to 1000; only with a callback",
                ATTEMPTS,
            ),
        )
        .property(
            "diarize",
            patterned(
                "true separates two speakers in mono audio (default false)",
                DIARIZE,
            ),
        );
    if metadata {
        form = form.property(
            "metadata",
            text("A JSON object laid over the transcript's metadata"),
        );
    }
    form.additional_properties(Some(AdditionalProperties::<Schema>::FreeForm(false)))
        .into()
}

/// The form of `POST /transcribe`.
pub struct TranscribeForm;

impl PartialSchema for TranscribeForm {
    fn schema() -> RefOr<Schema> {
        form(false)
    }
}

impl ToSchema for TranscribeForm {}

/// The form of `POST /transcribe/{company}/{organization}/{folder}`.
pub struct AddCallForm;

impl PartialSchema for AddCallForm {
    fn schema() -> RefOr<Schema> {
        form(true)
    }
}

impl ToSchema for AddCallForm {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each field's pattern accepts what `Form::asked` accepts, on values at and past its edges.
    #[test]
    fn the_patterns_accept_what_the_form_reads() {
        let matches =
            |pattern: &str, value: &str| regex::Regex::new(pattern).unwrap().is_match(value);
        for good in ["", "json", "JSON", " Text ", "txt", "srt", "VTT", "webvtt"] {
            assert!(matches(OUTPUT, good), "{good:?}");
            assert!(
                good.trim().is_empty() || good.trim().parse::<speech::output::Output>().is_ok()
            );
        }
        for bad in ["docx", "js on", "jsonx"] {
            assert!(!matches(OUTPUT, bad), "{bad:?}");
            assert!(bad.parse::<speech::output::Output>().is_err(), "{bad:?}");
        }
        for good in ["", "true", "FALSE", "1", "0", "Yes", " no "] {
            assert!(matches(DIARIZE, good), "{good:?}");
        }
        for bad in ["2", "maybe", "t"] {
            assert!(!matches(DIARIZE, bad), "{bad:?}");
        }
        for good in ["", "1", "+7", "0010", "999", "1000", " 5 "] {
            assert!(matches(ATTEMPTS, good), "{good:?}");
            let n = good.trim();
            assert!(n.is_empty() || n.parse::<u32>().is_ok_and(|n| (1..=1000).contains(&n)));
        }
        for bad in ["0", "1001", "-1", "1.0", "x", "10000"] {
            assert!(!matches(ATTEMPTS, bad), "{bad:?}");
            assert!(
                !bad.parse::<u32>().is_ok_and(|n| (1..=1000).contains(&n)),
                "{bad:?}"
            );
        }
    }
}
