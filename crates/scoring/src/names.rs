//! What names the analytics API accepts: organization and folder names (path segments and parts of
//! object keys), application names, metadata field names, and the reserved field names a metadata
//! request may not set.
//! Company names follow the token service's rule (`common::jwt::valid_company`).

use crate::Invalid;

/// The longest organization or folder name.
pub const MAX_NAME_LEN: usize = 64;

/// The longest metadata field name and value.
pub const MAX_FIELD_LEN: usize = 64;
pub const MAX_VALUE_LEN: usize = 4096;

/// The most metadata fields a call keeps, the most a PATCH sets and a DELETE names: a call's metadata is
/// rewritten and answered whole on every change, and the requests of all companies share the batches
/// that write it, so one call of a hundred thousand fields would slow everyone's.
pub const MAX_FIELDS: usize = 1000;

/// Refuses `count` fields (of a call, or of a request) over [`MAX_FIELDS`]; `what` says whose.
pub fn check_field_count(count: usize, what: &str) -> Result<(), Invalid> {
    if count > MAX_FIELDS {
        return Err(Invalid(format!(
            "{what} {count} metadata fields; at most {MAX_FIELDS} are accepted"
        )));
    }
    Ok(())
}

/// Field names a metadata request may not set or remove: the transcript's own fields, which the service
/// maintains (docs/analytics-api.md, Reserved metadata names).
pub const RESERVED_FIELDS: &[&str] = &[
    "tId",
    "datetime",
    "last_modified",
    "filename",
    "agent_id",
    "audio_seconds",
    "requestid",
    "utterances",
    "metadata",
    "company",
    "organization",
    "folder",
];

/// Agent ids a call may not have: an `/appstats` day holds its agents' objects beside its own `date` and
/// `agents` keys (docs/analytics-api.md, Adding calls).
pub const RESERVED_AGENT_IDS: [&str; 2] = ["agents", "date"];

/// The characters `apps::definition::invisible` refuses, as the inside of a character class: control
/// characters, and the zero-width and bidirectional marks.
macro_rules! invisible {
    () => {
        r"\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff"
    };
}

/// A name of category names' rules (`apps::definition::valid_category_name`, bounds apart) that also
/// refuses the characters of `refused`: none invisible, none refused, no whitespace at either end.
macro_rules! name_pattern {
    ($refused:literal) => {
        concat!(
            r"^[^\s",
            $refused,
            invisible!(),
            "]",
            "(?:[^",
            $refused,
            invisible!(),
            "]*",
            r"[^\s",
            $refused,
            invisible!(),
            "])?$"
        )
    };
}

/// The name rules of this module as anchored patterns of the dialect OpenAPI documents use, given to the
/// path parameters of the document so that a client checks a name as the service does; a test holds
/// each to its check. An application name also has 1 to 100 characters (the schema's bounds).
pub const COMPANY_PATTERN: &str = "^[a-z0-9_-]{1,64}$";
pub const NAME_PATTERN: &str = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$";
pub const APP_PATTERN: &str = name_pattern!("./");
/// A category name: as an application name, but it may hold `/`.
pub const CATEGORY_PATTERN: &str = name_pattern!(".");

/// 1 to 64 characters of letters, digits, `.`, `_` and `-`, starting with a letter or digit.
pub fn valid_name(name: &str) -> bool {
    (1..=MAX_NAME_LEN).contains(&name.len())
        && name.as_bytes()[0].is_ascii_alphanumeric()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

pub fn check_company(name: &str) -> Result<(), Invalid> {
    if common::jwt::valid_company(name) {
        Ok(())
    } else {
        Err(Invalid(format!(
            "invalid company name {name:?}: 1 to 64 characters of a-z, 0-9, '-' and '_'"
        )))
    }
}

/// `what` is "organization" or "folder".
pub fn check_name(what: &str, name: &str) -> Result<(), Invalid> {
    if valid_name(name) {
        Ok(())
    } else {
        Err(Invalid(format!(
            "invalid {what} name {name:?}: 1 to {MAX_NAME_LEN} characters of letters, digits, '.', '_' \
             and '-', starting with a letter or digit"
        )))
    }
}

/// An application name (a path segment, URL-encoded): a category name's rules (1 to 100 characters, no
/// `.`, no control or invisible characters, no whitespace at either end), and no `/`.
pub fn check_app(name: &str) -> Result<(), Invalid> {
    if crate::apps::definition::valid_category_name(name) && !name.contains('/') {
        Ok(())
    } else {
        Err(Invalid(format!(
            "invalid application name {name:?}: 1 to {} characters, no '.' or '/', no control \
             characters, no whitespace at either end",
            crate::apps::definition::MAX_NAME_CHARS
        )))
    }
}

/// The reserved field name `name` is in any case (`TID` is `tId`): case-insensitive readers of the
/// metadata (spreadsheets, some search backends) would see two values for one name.
pub fn reserved_field(name: &str) -> Option<&'static str> {
    RESERVED_FIELDS
        .iter()
        .copied()
        .find(|reserved| reserved.eq_ignore_ascii_case(name))
}

/// A metadata field name: not reserved in any case, then [`check_field_syntax`].
pub fn check_field(name: &str) -> Result<(), Invalid> {
    match reserved_field(name) {
        Some(reserved) if reserved == name => Err(Invalid(format!(
            "{name} is a reserved field name and cannot be set or removed through metadata"
        ))),
        Some(reserved) => Err(Invalid(format!(
            "{name} is the reserved field name {reserved} in another case and cannot be set through \
             metadata"
        ))),
        None => check_field_syntax(name),
    }
}

/// A metadata field name a `DELETE` may name: as [`check_field`], except that a reserved name in another
/// case (`TID`) may be removed, since calls may hold one set before such names were refused.
pub fn check_removable_field(name: &str) -> Result<(), Invalid> {
    if RESERVED_FIELDS.contains(&name) {
        return check_field(name);
    }
    check_field_syntax(name)
}

/// Whether a metadata field name may hold `c`: not a control or invisible mark (as category names), not
/// whitespace other than the space, not ASCII punctuation other than `_`, `-` and `.` (so `:` ends the
/// field of a search filter, and no name needs quoting in the index's filter syntax).
fn field_char(c: char) -> bool {
    let other_space = c.is_whitespace() && c != ' ';
    let other_punctuation = c.is_ascii_punctuation() && !matches!(c, '_' | '-' | '.');
    !(crate::apps::definition::invisible(c) || other_space || other_punctuation)
}

/// 1 to 64 characters that [`field_char`] allows, no space at either end, and no empty part between
/// dots, which the search index reads as nesting (its own check is applied too, so no field accepted
/// here is one it would refuse).
fn check_field_syntax(name: &str) -> Result<(), Invalid> {
    let valid = (1..=MAX_FIELD_LEN).contains(&name.chars().count())
        && name.chars().all(field_char)
        && !name.starts_with(' ')
        && !name.ends_with(' ')
        && common::search::check_field_name(name).is_ok();
    if valid {
        Ok(())
    } else {
        Err(Invalid(format!(
            "invalid metadata field name {name:?}: 1 to {MAX_FIELD_LEN} characters, no control or \
             invisible characters, no punctuation but '_', '-' and '.', no whitespace but inner \
             spaces, no empty part between dots"
        )))
    }
}

/// The characters [`field_char`] refuses, as the inside of a character class (dialect of the other
/// patterns here).
macro_rules! field_refused {
    () => {
        concat!(
            invisible!(),
            r"\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000",
            r"!-,/:-@\[-\^`{-~"
        )
    };
}

/// The syntax of a field name (not its length, nor the reserved names): the first character neither a
/// space nor a dot, and every dot followed by a character that is not one, the last neither.
pub const FIELD_PATTERN: &str = concat!(
    "^[^",
    field_refused!(),
    ". ](?:(?:[^",
    field_refused!(),
    ".]|\\.[^",
    field_refused!(),
    ".])*(?:[^",
    field_refused!(),
    ". ]|\\.[^",
    field_refused!(),
    ". ]))?$"
);

/// The reserved names in any case, as one anchored pattern (`[tT][iI][dD]|...`).
pub fn reserved_fields_pattern() -> String {
    let any_case = |name: &str| -> String {
        name.chars()
            .map(|c| {
                if c.is_ascii_alphabetic() {
                    format!("[{}{}]", c.to_ascii_lowercase(), c.to_ascii_uppercase())
                } else {
                    c.to_string()
                }
            })
            .collect()
    };
    let names: Vec<String> = RESERVED_FIELDS.iter().map(|n| any_case(n)).collect();
    format!("^(?:{})$", names.join("|"))
}

/// The schema of a field name a `PATCH` sets, a folder keeps and a search filter names.
pub fn field_schema() -> utoipa::openapi::schema::Object {
    let pattern = reserved_fields_pattern();
    common::http::with_keyword(
        field_name_object("A metadata field name, not a reserved one in any case"),
        "not",
        serde_json::json!({ "pattern": pattern }),
    )
}

/// The schema of a field name a `DELETE` names: a reserved name in another case is one.
pub fn removable_field_schema() -> utoipa::openapi::schema::Object {
    common::http::with_keyword(
        field_name_object("A metadata field name, not a reserved one (in another case it may be)"),
        "not",
        serde_json::json!({ "enum": RESERVED_FIELDS }),
    )
}

fn field_name_object(description: &str) -> utoipa::openapi::schema::Object {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .min_length(Some(1))
        .max_length(Some(MAX_FIELD_LEN))
        .pattern(Some(FIELD_PATTERN))
        .description(Some(description))
        .examples(["queue"])
        .build()
}

/// A metadata value as a request gives it: text of at most 4096 characters without control characters
/// but tab, a number or a boolean (kept as their text).
pub const VALUE_PATTERN: &str = r"^[^\x00-\x08\x0a-\x1f\x7f-\x9f]*$";

/// The schema of a metadata value a request sets.
pub fn value_schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Type};
    OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .max_length(Some(MAX_VALUE_LEN))
                .pattern(Some(VALUE_PATTERN)),
        )
        .item(ObjectBuilder::new().schema_type(Type::Number))
        .item(ObjectBuilder::new().schema_type(Type::Boolean))
        .into()
}

/// A metadata value: at most 4096 characters, no control characters other than tab.
pub fn check_value(field: &str, value: &str) -> Result<(), Invalid> {
    if value.chars().count() > MAX_VALUE_LEN {
        return Err(Invalid(format!(
            "the value of {field} is longer than {MAX_VALUE_LEN} characters"
        )));
    }
    if value.chars().any(|c| c.is_control() && c != '\t') {
        return Err(Invalid(format!(
            "the value of {field} contains control characters"
        )));
    }
    Ok(())
}

/// A name as a request's path gives it, as its own type, so that one kind of name cannot stand for
/// another (an organization where a folder is expected). Taken as sent: a read of a name that breaks the
/// rules finds nothing (404); a write checks it with `check` once the caller is known (400).
macro_rules! path_name {
    ($(#[$doc:meta])* $name:ident, $check:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// Whether the name follows its rules, for a write that would create or keep it.
            pub fn check(&self) -> Result<(), Invalid> {
                let check: fn(&str) -> Result<(), Invalid> = $check;
                check(&self.0)
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;

            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<$name> for String {
            fn from(name: $name) -> String {
                name.0
            }
        }

        impl From<&str> for $name {
            fn from(name: &str) -> $name {
                $name(name.to_string())
            }
        }
    };
}

path_name!(
    /// A company (`check_company`).
    CompanyName,
    check_company
);
path_name!(
    /// An organization of a company (`check_name`).
    OrgName,
    |name| check_name("organization", name)
);
path_name!(
    /// A folder of an organization (`check_name`).
    FolderName,
    |name| check_name("folder", name)
);
path_name!(
    /// An application of a company (`check_app`).
    AppName,
    check_app
);
path_name!(
    /// A call's id (`tId`): any text; a call is found by it or not.
    CallId,
    |_| Ok(())
);
path_name!(
    /// A transcription request's id: any text; a request is found by it or not.
    RequestId,
    |_| Ok(())
);

#[cfg(test)]
mod tests {
    use super::*;

    /// A path's names are read as sent, whatever they hold, and checked against their own kind's rules.
    #[test]
    fn path_names_are_read_as_sent_and_checked_by_kind() {
        let folder: FolderName = serde_json::from_str("\"a b\"").unwrap();
        assert_eq!(folder.as_str(), "a b");
        assert!(folder.check().is_err(), "a space is no folder name");
        assert!(FolderName::from("inbox-2").check().is_ok());
        assert!(OrgName::from("sales").check().is_ok());
        let refused = CompanyName::from("Acme").check().unwrap_err();
        assert!(refused.0.contains("company"), "{refused:?}");
        assert!(
            AppName::from("a/b").check().is_err(),
            "no '/' in an application name"
        );
        assert!(AppName::from("Greeting v2").check().is_ok());
        assert!(CallId::from("any text at all").check().is_ok());
    }

    #[test]
    fn names_that_could_leave_their_key_or_path_are_refused() {
        for good in ["support", "inbox-2", "a.b_c", "X"] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", ".", "..", ".hidden", "a/b", "a b", "ü", &"x".repeat(65)] {
            assert!(!valid_name(bad), "{bad:?}");
        }
    }

    /// Each documented pattern accepts exactly the names its check accepts, on names at and past every
    /// edge of the rules.
    #[test]
    fn the_documented_patterns_agree_with_the_checks() {
        let names: Vec<String> = [
            "",
            "a",
            "A",
            "0",
            "acme",
            "ac-me_1",
            "Acme",
            "a.b",
            ".a",
            "a.",
            "-a",
            "_a",
            "a b",
            " a",
            "a ",
            "a/b",
            "ü",
            "Zürich",
            "a\u{0}",
            "a\t",
            "a\u{7f}",
            "a\u{85}b",
            "a\u{a0}",
            "\u{a0}a",
            "a\u{200b}b",
            "a\u{202e}b",
            "a\u{2066}b",
            "\u{feff}a",
            "a\u{3000}",
            "x\u{2028}y",
            "日本",
            "a%2Fb",
            "..",
            "a..b",
            "a\nb",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([64, 65, 100, 101].map(|n| "a".repeat(n)))
        .collect();
        let pattern = |p: &str| regex::Regex::new(p).unwrap();
        let (company, name, app, category) = (
            pattern(COMPANY_PATTERN),
            pattern(NAME_PATTERN),
            pattern(APP_PATTERN),
            pattern(CATEGORY_PATTERN),
        );
        for n in &names {
            assert_eq!(
                company.is_match(n),
                check_company(n).is_ok(),
                "company {n:?}"
            );
            assert_eq!(name.is_match(n), valid_name(n), "name {n:?}");
            let bounded = (1..=100).contains(&n.chars().count());
            assert_eq!(
                category.is_match(n) && bounded,
                crate::apps::definition::valid_category_name(n),
                "category {n:?}"
            );
            assert_eq!(
                app.is_match(n) && bounded,
                check_app(n).is_ok(),
                "application {n:?}"
            );
        }
    }

    /// The documented rules of a field name (the pattern, 1 to 64 characters, not a reserved name in any
    /// case) accept exactly what the check accepts: every character alone, between two letters and after
    /// one, and the names at the edges of the rules.
    #[test]
    fn the_documented_field_rules_agree_with_the_check() {
        let pattern = regex::Regex::new(FIELD_PATTERN).unwrap();
        let reserved = regex::Regex::new(&reserved_fields_pattern()).unwrap();
        let documented = |name: &str| {
            pattern.is_match(name)
                && (1..=MAX_FIELD_LEN).contains(&name.chars().count())
                && !reserved.is_match(name)
        };
        let mut accepted = 0;
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            for name in [c.to_string(), format!("a{c}b"), format!("a{c}")] {
                assert_eq!(documented(&name), check_field(&name).is_ok(), "{name:?}");
            }
            accepted += usize::from(check_field(&c.to_string()).is_ok());
        }
        assert!(accepted > 100_000, "letters of every script: {accepted}");
        let edges = [
            "",
            " ",
            ".",
            "a",
            "a.b",
            "a..b",
            ".a",
            "a.",
            "a .b",
            "a. b",
            "a b",
            " a",
            "a ",
            "a. ",
            "a.b.c",
            "queue",
            "customer id",
            "Größe",
            "日本語",
            "tId",
            "TID",
            "tid",
            "Datetime",
            "metadata",
            "metadata2",
            "xtid",
            "a:b",
            "a/b",
            "a\u{a0}b",
            "a\u{200b}b",
        ];
        // 64 characters of 4 bytes are within the search index's limit in bytes.
        let lengths = [64, 65].map(|n| "x".repeat(n));
        let wide = [64, 65].map(|n| "\u{1f600}".repeat(n));
        for name in edges
            .iter()
            .copied()
            .chain(lengths.iter().chain(&wide).map(String::as_str))
        {
            assert_eq!(documented(name), check_field(name).is_ok(), "{name:?}");
        }
        assert!(check_field(&wide[0]).is_ok());
    }

    /// A `DELETE` may name a reserved name in another case; its schema says the same.
    #[test]
    fn the_documented_removable_fields_agree_with_the_check() {
        let pattern = regex::Regex::new(FIELD_PATTERN).unwrap();
        for name in [
            "tId", "TID", "tid", "Datetime", "queue", "a.", "METADATA", "metadata",
        ] {
            let documented = pattern.is_match(name) && !RESERVED_FIELDS.contains(&name);
            assert_eq!(documented, check_removable_field(name).is_ok(), "{name:?}");
        }
    }

    /// A value's documented pattern is the check's rule on every character.
    #[test]
    fn the_documented_value_rule_agrees_with_the_check() {
        let pattern = regex::Regex::new(VALUE_PATTERN).unwrap();
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            let value = format!("a{c}");
            assert_eq!(
                pattern.is_match(&value),
                check_value("f", &value).is_ok(),
                "{c:?}"
            );
        }
    }

    #[test]
    fn reserved_and_malformed_fields_are_refused() {
        for reserved in ["tId", "datetime", "last_modified", "filename", "agent_id"] {
            assert!(check_field(reserved).is_err(), "{reserved}");
            assert!(check_removable_field(reserved).is_err(), "{reserved}");
        }
        for other_case in [
            "TID",
            "tid",
            "Datetime",
            "LAST_MODIFIED",
            "Agent_Id",
            "METADATA",
        ] {
            assert!(check_field(other_case).is_err(), "{other_case}");
            assert!(check_removable_field(other_case).is_ok(), "{other_case}");
        }
        assert!(check_removable_field("a\nb").is_err());
        assert!(check_field("queue").is_ok());
        assert!(check_field("customer id").is_ok());
        assert!(check_field(" queue").is_err());
        assert!(check_field("a\u{202e}b").is_err(), "bidi override");
        assert!(check_value("queue", "line\nbreak").is_err());
        assert!(check_value("queue", "tab\tok").is_ok());
    }

    #[test]
    fn application_names_follow_category_names_and_hold_no_slash() {
        for good in ["billing", "Sales Q4", "Ärger", &"x".repeat(100)] {
            assert!(check_app(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "a.b",
            "a/b",
            " a",
            "a\n",
            "a\u{200b}b",
            &"x".repeat(101),
        ] {
            assert!(check_app(bad).is_err(), "{bad:?}");
        }
    }
}
