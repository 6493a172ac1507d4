//! The `/config` records. A folder record has exactly the fields of docs/analytics-api.md (Folder record);
//! a body may omit any setting, which then takes its default, and may carry the read-only fields of a
//! record (`created`, `status`, ...), which are ignored, so a record read with GET can be sent back with PUT.
//! Any other field is refused.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::names;
use crate::Invalid;

/// The most metadata fields a folder configures.
pub const MAX_CUSTOM_META: usize = 100;
/// The most applications a folder uses.
pub const MAX_APPS: usize = 100;
/// The longest text setting.
pub const MAX_SETTING_LEN: usize = 256;
/// A text setting: no control characters (and at most [`MAX_SETTING_LEN`] characters).
const SETTING_PATTERN: &str = r"^[^\x00-\x1f\x7f-\x9f]*$";
/// A folder's callback address: `http` or `https`, a host named by letters, digits, `.` and `-` whose
/// last label starts with a letter, a dotted IPv4 address or a bracketed IPv6 one (RFC 3986), an optional
/// port, and a path, query or fragment of printable ASCII. The URL parser must read it too (it also
/// checks `xn--` labels, which this form leaves loose).
static CALLBACK_URL_PATTERN: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let octet = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";
    let ipv4 = format!(r"(?:{octet}\.){{3}}{octet}");
    let h = "[0-9A-Fa-f]{1,4}";
    let ls32 = format!("(?:{h}:{h}|{ipv4})");
    let ipv6 = [
        format!("(?:{h}:){{6}}{ls32}"),
        format!("::(?:{h}:){{5}}{ls32}"),
        format!("(?:{h})?::(?:{h}:){{4}}{ls32}"),
        format!("(?:(?:{h}:){{0,1}}{h})?::(?:{h}:){{3}}{ls32}"),
        format!("(?:(?:{h}:){{0,2}}{h})?::(?:{h}:){{2}}{ls32}"),
        format!("(?:(?:{h}:){{0,3}}{h})?::{h}:{ls32}"),
        format!("(?:(?:{h}:){{0,4}}{h})?::{ls32}"),
        format!("(?:(?:{h}:){{0,5}}{h})?::{h}"),
        format!("(?:(?:{h}:){{0,6}}{h})?::"),
    ]
    .join("|");
    let label = "[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?";
    let last = "[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?";
    let port =
        "(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})";
    format!(
        r"^[hH][tT][tT][pP][sS]?://(?:(?:{label}\.)*{last}\.?|{ipv4}|\[(?:{ipv6})\])(?::{port})?(?:[/?#][!-~]*)?$"
    )
});

/// Where a folder's transcription results go by default, and how often delivery is tried.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FolderCallback {
    /// An `http` or `https` address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = callback_url_schema)]
    pub url: Option<String>,
    /// Delivery attempts at most (default 100).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "common::whole::optional"
    )]
    #[schema(minimum = 1, maximum = 1000)]
    pub attempts: Option<u32>,
}

/// The settings of a folder: everything in its record but `created` and `status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct FolderSettings {
    /// Transcription servers (pools) the folder's audio goes to.
    #[schema(schema_with = settings_schema)]
    pub servers: Vec<String>,
    /// Speakers per call.
    #[serde(deserialize_with = "common::whole::number")]
    #[schema(minimum = 1, maximum = 10)]
    pub nspeakers: i64,
    #[schema(schema_with = setting_schema)]
    pub audiotype: String,
    pub purifyaudio: bool,
    pub purifytext: bool,
    /// The recognition model of channel 0 and of channel 1.
    #[schema(schema_with = setting_schema)]
    pub modelchan0: String,
    #[schema(schema_with = setting_schema)]
    pub modelchan1: String,
    /// The channel of the agent in stereo audio (0 or 1).
    #[serde(deserialize_with = "common::whole::number")]
    #[schema(minimum = 0, maximum = 1)]
    pub agentchan: i64,
    #[schema(schema_with = setting_schema)]
    pub mode: String,
    pub callback: FolderCallback,
    /// The applications that score the folder's calls.
    #[schema(schema_with = apps_schema)]
    pub apps: Vec<String>,
    /// Options passed to the speech recognizer.
    #[schema(value_type = Object)]
    pub asroptions: Map<String, Value>,
    /// The metadata fields kept in the database and the search index (others only in the transcript).
    #[schema(schema_with = custom_meta_schema)]
    pub custom_meta: Vec<String>,
    /// Read-only: accepted so that a record read with GET can be sent back, and ignored.
    #[serde(skip_serializing)]
    #[schema(read_only, value_type = serde_json::Value)]
    pub created: Option<Value>,
    /// Read-only, like `created`.
    #[serde(skip_serializing)]
    #[schema(read_only, value_type = serde_json::Value)]
    pub status: Option<Value>,
}

impl Default for FolderSettings {
    fn default() -> Self {
        FolderSettings {
            servers: Vec::new(),
            nspeakers: 2,
            audiotype: "call".into(),
            purifyaudio: false,
            purifytext: false,
            modelchan0: "en-us".into(),
            modelchan1: "en-us".into(),
            agentchan: 0,
            mode: "normal".into(),
            callback: FolderCallback::default(),
            apps: Vec::new(),
            asroptions: Map::new(),
            custom_meta: Vec::new(),
            created: None,
            status: None,
        }
    }
}

impl FolderSettings {
    /// Checks every setting; the message names the field.
    pub fn check(&self) -> Result<(), Invalid> {
        let bad = |field: &str, why: String| Err(Invalid(format!("{field}: {why}")));
        if !(1..=10).contains(&self.nspeakers) {
            return bad(
                "nspeakers",
                format!("must be 1 to 10, got {}", self.nspeakers),
            );
        }
        if !(0..=1).contains(&self.agentchan) {
            return bad(
                "agentchan",
                format!("must be 0 or 1, got {}", self.agentchan),
            );
        }
        for (field, value) in [
            ("audiotype", &self.audiotype),
            ("modelchan0", &self.modelchan0),
            ("modelchan1", &self.modelchan1),
            ("mode", &self.mode),
        ] {
            check_text(field, value)?;
        }
        for (i, server) in self.servers.iter().enumerate() {
            check_text(&format!("servers[{i}]"), server)?;
        }
        if self.apps.len() > MAX_APPS {
            return bad("apps", format!("at most {MAX_APPS} applications"));
        }
        for (i, app) in self.apps.iter().enumerate() {
            check_text(&format!("apps[{i}]"), app)?;
        }
        if self.custom_meta.len() > MAX_CUSTOM_META {
            return bad("custom_meta", format!("at most {MAX_CUSTOM_META} fields"));
        }
        for (i, field) in self.custom_meta.iter().enumerate() {
            names::check_field(field).map_err(|e| Invalid(format!("custom_meta[{i}]: {e}")))?;
            if self.custom_meta[..i].contains(field) {
                return bad(
                    &format!("custom_meta[{i}]"),
                    format!("{field} is listed twice"),
                );
            }
        }
        if let Some(url) = &self.callback.url {
            if !valid_callback_url(url) {
                return bad(
                    "callback.url",
                    format!("{url:?} is not an http or https address"),
                );
            }
        }
        if let Some(attempts) = self.callback.attempts {
            if !(1..=1000).contains(&attempts) {
                return bad(
                    "callback.attempts",
                    format!("must be 1 to 1000, got {attempts}"),
                );
            }
        }
        if serde_json::to_string(&self.asroptions).map_or(0, |s| s.len()) > 16 * 1024 {
            return bad("asroptions", "is larger than 16 KiB".into());
        }
        Ok(())
    }

    pub fn configures(&self, field: &str) -> bool {
        self.custom_meta.iter().any(|f| f == field)
    }
}

fn check_text(field: &str, value: &str) -> Result<(), Invalid> {
    if value.chars().count() > MAX_SETTING_LEN || value.chars().any(char::is_control) {
        return Err(Invalid(format!(
            "{field}: at most {MAX_SETTING_LEN} characters, no control characters"
        )));
    }
    Ok(())
}

/// A folder record, its fields in the documented order.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FolderRecord {
    pub servers: Vec<String>,
    pub nspeakers: i64,
    pub audiotype: String,
    /// The day the folder was created, YYYY-MM-DD.
    pub created: String,
    pub purifyaudio: bool,
    pub purifytext: bool,
    pub modelchan0: String,
    pub modelchan1: String,
    pub agentchan: i64,
    pub mode: String,
    /// `OK`, or `deleting` while the folder is being deleted.
    pub status: String,
    pub callback: FolderCallback,
    pub apps: Vec<String>,
    #[schema(value_type = Object)]
    pub asroptions: Map<String, Value>,
    pub custom_meta: Vec<String>,
}

impl FolderRecord {
    pub fn new(settings: FolderSettings, created: String, status: String) -> FolderRecord {
        FolderRecord {
            servers: settings.servers,
            nspeakers: settings.nspeakers,
            audiotype: settings.audiotype,
            created,
            purifyaudio: settings.purifyaudio,
            purifytext: settings.purifytext,
            modelchan0: settings.modelchan0,
            modelchan1: settings.modelchan1,
            agentchan: settings.agentchan,
            mode: settings.mode,
            status,
            callback: settings.callback,
            apps: settings.apps,
            asroptions: settings.asroptions,
            custom_meta: settings.custom_meta,
        }
    }
}

/// A company body (`POST`/`PUT /config/<company>`). The read-only fields of a record read back are
/// accepted and ignored.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CompanyBody {
    /// A display name; defaults to the short name.
    #[schema(schema_with = display_name_schema)]
    pub name: Option<String>,
    #[schema(read_only, value_type = serde_json::Value)]
    pub company: Option<Value>,
    #[schema(read_only, value_type = serde_json::Value)]
    pub created: Option<Value>,
    #[schema(read_only, value_type = serde_json::Value)]
    pub status: Option<Value>,
    #[schema(read_only, value_type = serde_json::Value)]
    pub organizations: Option<Value>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CompanyRecord {
    pub company: String,
    pub name: String,
    pub created: String,
    /// `OK`, or `deleting (NN%)` while the company is being deleted.
    pub status: String,
    pub organizations: Vec<String>,
}

/// An organization body (`POST`/`PUT /config/<company>/<organization>`). The read-only fields of a
/// record read back are accepted and ignored.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OrganizationBody {
    /// An IANA time zone, e.g. `Europe/Berlin`: the zone of its calls' `datetime`.
    #[schema(schema_with = timezone_schema)]
    pub timezone: String,
    #[serde(default)]
    #[schema(read_only, value_type = serde_json::Value)]
    pub organization: Option<Value>,
    #[serde(default)]
    #[schema(read_only, value_type = serde_json::Value)]
    pub created: Option<Value>,
    #[serde(default)]
    #[schema(read_only, value_type = serde_json::Value)]
    pub status: Option<Value>,
    #[serde(default)]
    #[schema(read_only, value_type = serde_json::Value)]
    pub folders: Option<Value>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OrganizationRecord {
    pub organization: String,
    pub timezone: String,
    pub created: String,
    /// `OK`, or `deleting (NN%)` while the organization is being deleted.
    pub status: String,
    pub folders: Vec<String>,
}

/// The time zone named `name`, or a message saying it is not one.
/// A company's display name as `names::check_value` takes it: at most 4096 characters, no control
/// character but tab.
fn display_name_schema() -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
        .max_length(Some(names::MAX_VALUE_LEN))
        .pattern(Some(names::VALUE_PATTERN))
        .build()
}

/// Every name `parse_timezone` takes: the IANA database's zones and links, as spelled there.
fn timezone_schema() -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(chrono_tz::TZ_VARIANTS.iter().map(|tz| tz.name())))
        .examples(["Europe/Berlin"])
        .build()
}

pub fn parse_timezone(name: &str) -> Result<chrono_tz::Tz, Invalid> {
    name.parse::<chrono_tz::Tz>().map_err(|_| {
        Invalid(format!(
            "timezone: {name:?} is not an IANA time zone name such as Europe/Berlin"
        ))
    })
}

/// At most 100 field names, none twice, each a name a `PATCH` may set.
fn custom_meta_schema() -> utoipa::openapi::schema::Array {
    utoipa::openapi::schema::ArrayBuilder::new()
        .items(names::field_schema())
        .max_items(Some(MAX_CUSTOM_META))
        .unique_items(true)
        .build()
}

static CALLBACK_URL: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| regex::Regex::new(&CALLBACK_URL_PATTERN).expect("a valid pattern"));

/// Whether `url` has the documented form and the URL parser reads it as an `http(s)` address of a host.
fn valid_callback_url(url: &str) -> bool {
    CALLBACK_URL.is_match(url)
        && url::Url::parse(url)
            .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
}

fn setting_object() -> utoipa::openapi::schema::ObjectBuilder {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .max_length(Some(MAX_SETTING_LEN))
        .pattern(Some(SETTING_PATTERN))
}

/// A text setting.
fn setting_schema() -> utoipa::openapi::schema::Object {
    setting_object().build()
}

/// A list of text settings.
fn settings_schema() -> utoipa::openapi::schema::Array {
    utoipa::openapi::schema::ArrayBuilder::new()
        .items(setting_object())
        .build()
}

/// At most 100 application names, each a text setting.
fn apps_schema() -> utoipa::openapi::schema::Array {
    utoipa::openapi::schema::ArrayBuilder::new()
        .items(setting_object())
        .max_items(Some(MAX_APPS))
        .build()
}

/// The callback address, or null for none.
fn callback_url_schema() -> utoipa::openapi::schema::Object {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::SchemaType::from_iter([
            utoipa::openapi::Type::String,
            utoipa::openapi::Type::Null,
        ]))
        .pattern(Some(CALLBACK_URL_PATTERN.as_str()))
        .description(Some("An http or https address"))
        .examples(["https://hooks.example.com/calls"])
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every address of the documented form but one with a malformed `xn--` label is one the URL
    /// parser reads; others are refused.
    #[test]
    fn the_documented_callback_addresses_are_read() {
        let pattern = regex::Regex::new(&CALLBACK_URL_PATTERN).unwrap();
        for url in [
            "https://hooks.example.com/calls",
            "HTTP://a",
            "http://a.",
            "http://a:8080",
            "http://a:65535/x?y=1#z",
            "http://10.0.0.1/x",
            "http://255.255.255.255",
            "http://[::1]:9/x",
            "http://[::]",
            "http://[fd00:ec2::254]/x",
            "http://[1:2:3:4:5:6:7:8]",
            "http://[::ffff:10.0.0.1]",
            "http://a-b.c9",
            "http://0x.a1",
            "https://a/%zz\\x",
        ] {
            assert!(pattern.is_match(url), "{url:?}");
            assert!(valid_callback_url(url), "{url:?}");
        }
        for url in [
            "http://09",
            "http://a.1",
            "http://1.2.3.4.5",
            "http://256.0.0.1",
            "http://0x1f",
            "http://-a",
            "http://a-",
            "http://a:65536",
            "http://[438eC7df9bf]",
            "http://[:::::]",
            "http://[1:2:3:4:5:6:7:8:9]",
            "http://[::1",
            "http://a b",
            "http://user@a",
            "http://é.com",
            "ftp://a",
            "http://",
            "",
            " http://a",
            "http://a/ x",
            "http://a/\u{7f}",
            "https://a/é",
        ] {
            assert!(!pattern.is_match(url), "{url:?}");
            assert!(!valid_callback_url(url), "{url:?}");
        }
        // Left to the parser: a malformed punycode label has the form and is refused.
        let url = "http://xn--a";
        assert!(pattern.is_match(url) && !valid_callback_url(url), "{url:?}");
    }

    /// A text setting's documented pattern is the check's rule on every character.
    #[test]
    fn the_setting_pattern_is_the_check() {
        let pattern = regex::Regex::new(SETTING_PATTERN).unwrap();
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            let value = format!("a{c}");
            assert_eq!(
                pattern.is_match(&value),
                check_text("f", &value).is_ok(),
                "{c:?}"
            );
        }
    }
}
