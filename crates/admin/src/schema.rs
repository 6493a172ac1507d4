//! Building blocks of the request schemas, each taking the limit constant the validation code checks, so
//! that the OpenAPI document and the checks cannot drift apart (utoipa's `max_length = ...` takes only a
//! literal; `schema_with = text::<NAME_MAX>` takes the constant). Nullable variants describe the optional
//! fields, which accept `null` as "left out".

use regex::Regex;
use serde_json::Value;
use utoipa::openapi::schema::{ArrayBuilder, Object, ObjectBuilder, SchemaType, Type};
use utoipa::openapi::{RefOr, Schema};

/// The characters `api::is_deceptive` refuses (control characters and bidirectional overrides), as the
/// inside of a character class, for the patterns of text fields.
macro_rules! deceptive {
    () => {
        r"\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
    };
}
pub(crate) use deceptive;

/// Text without control characters or bidirectional overrides (`api::is_deceptive`).
pub const TEXT_PATTERN: &str = concat!("^[^", deceptive!(), "]*$");

/// A string of text (`TEXT_PATTERN`).
fn text_string(nullable: bool) -> ObjectBuilder {
    string(nullable).pattern(Some(TEXT_PATTERN))
}

fn string(nullable: bool) -> ObjectBuilder {
    let kind = if nullable {
        SchemaType::from_iter([Type::String, Type::Null])
    } else {
        SchemaType::new(Type::String)
    };
    ObjectBuilder::new().schema_type(kind)
}

/// A string of at most `MAX` characters.
pub fn text<const MAX: usize>() -> Object {
    text_string(false).max_length(Some(MAX)).build()
}

/// A string of 1 to `MAX` characters.
pub fn name<const MAX: usize>() -> Object {
    text_string(false)
        .min_length(Some(1))
        .max_length(Some(MAX))
        .build()
}

/// A string of at most `MAX` characters, or null.
pub fn nullable_text<const MAX: usize>() -> Object {
    text_string(true).max_length(Some(MAX)).build()
}

/// One of `values`.
pub fn one_of(values: &[&str], nullable: bool) -> Object {
    string(nullable).enum_values(Some(values.to_vec())).build()
}

/// A string matching `pattern` (anchored), at most `max` characters, with an example.
pub fn patterned(pattern: &str, max: usize, example: &str, nullable: bool) -> Object {
    string(nullable)
        .pattern(Some(pattern))
        .max_length(Some(max))
        .examples([example])
        .build()
}

/// As [`list_of`], none of the items twice.
pub fn unique_list_of(item: Object, min_items: usize, nullable: bool) -> RefOr<Schema> {
    list(item, min_items, nullable).unique_items(true).into()
}

/// A list of `item`s, or null when `nullable` (an optional field left out).
pub fn list_of(item: Object, min_items: usize, nullable: bool) -> RefOr<Schema> {
    list(item, min_items, nullable).into()
}

fn list(item: Object, min_items: usize, nullable: bool) -> ArrayBuilder {
    let kind = if nullable {
        SchemaType::from_iter([Type::Array, Type::Null])
    } else {
        SchemaType::new(Type::Array)
    };
    let array = ArrayBuilder::new().schema_type(kind).items(item);
    if min_items > 0 {
        array.min_items(Some(min_items))
    } else {
        array
    }
}

/// Any JSON value: read-only parts of a record sent back, which are accepted and ignored.
pub fn ignored(description: &str) -> Object {
    ObjectBuilder::new()
        .schema_type(SchemaType::AnyValue)
        .description(Some(description))
        .build()
}

/// A compiled, anchored pattern; the same text is the schema's `pattern`.
pub fn compile(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a request field pattern compiles")
}

/// An integer from `min` to `max` (either bound optional).
pub fn integer(min: Option<i64>, max: Option<i64>, default: Option<i64>, nullable: bool) -> Object {
    let kind = if nullable {
        SchemaType::from_iter([Type::Integer, Type::Null])
    } else {
        SchemaType::new(Type::Integer)
    };
    ObjectBuilder::new()
        .schema_type(kind)
        .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
            utoipa::openapi::KnownFormat::Int64,
        )))
        .minimum(min)
        .maximum(max)
        .default(default.map(Value::from))
        .build()
}

/// `schema` with `field` added to its required properties (and writable: a field a PUT only checks
/// against its path is read-only there).
pub fn requiring(schema: RefOr<Schema>, field: &str, description: &str) -> RefOr<Schema> {
    match schema {
        RefOr::T(Schema::Object(mut object)) => {
            if !object.required.iter().any(|r| r == field) {
                object.required.push(field.to_string());
            }
            if let Some(RefOr::T(Schema::Object(property))) = object.properties.get_mut(field) {
                property.read_only = None;
            }
            object.description = Some(description.to_string());
            RefOr::T(Schema::Object(object))
        }
        other => other,
    }
}
