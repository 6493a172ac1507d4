//! The documented shapes of a `/track` body (docs/ingest-api.md, Sending events and Events), built from
//! the limits the reader enforces. The body is read as a stream (`body`, `form`, `batch`) and checked event
//! by event (`validate`), never into one typed value, so these types exist for the OpenAPI document: a
//! client generated from it sends what the service reads.

use utoipa::openapi::schema::{
    AdditionalProperties, ArrayBuilder, ObjectBuilder, OneOfBuilder, Schema, SchemaType, Type,
};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

use super::batch::MAX_BATCH;
use super::validate::{
    EVENT_NAME, INSERT_ID, MAX_INSERT_ID_CHARS, MAX_NAME_CHARS, MAX_PROPERTIES,
    MAX_PROPERTY_VALUE_CHARS, MAX_USER_AGENT_CHARS, SESSION_DUA, SESSION_IP, TIME, USER_ID,
};

/// `{"events": [...]}`: the JSON body, and the object a form carries.
pub struct TrackBatch;

impl PartialSchema for TrackBatch {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .property(
                "events",
                ArrayBuilder::new()
                    .items(TrackEvent::schema())
                    .max_items(Some(MAX_BATCH))
                    .description(Some(format!("At most {MAX_BATCH} events"))),
            )
            .required("events")
            .into()
    }
}

impl ToSchema for TrackBatch {}

/// The form with a field `events` holding the batch object, or only its array, as JSON text.
pub struct TrackForm;

impl PartialSchema for TrackForm {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .property(
                "events",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .description(Some(
                        "The JSON text of {\"events\": [...]} or of its array (see TrackBatch)",
                    ))
                    .examples([r#"[{"event_name":"signup","user_id":"u-1","event_timestamp_epoch":1795428000000}]"#]),
            )
            .required("events")
            .into()
    }
}

impl ToSchema for TrackForm {}

/// One event: flat, its known fields and up to `MAX_PROPERTIES` custom properties (strings or numbers).
pub struct TrackEvent;

impl PartialSchema for TrackEvent {
    fn schema() -> RefOr<Schema> {
        let text = |min: usize, max: usize| {
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(min))
                .max_length(Some(max))
        };
        let string_or_integer = |description: &str| {
            OneOfBuilder::new()
                .item(text(1, MAX_NAME_CHARS))
                .item(ObjectBuilder::new().schema_type(Type::Integer))
                .description(Some(description.to_string()))
        };
        let property_value = OneOfBuilder::new()
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .max_length(Some(MAX_PROPERTY_VALUE_CHARS)),
            )
            .item(ObjectBuilder::new().schema_type(Type::Number));
        ObjectBuilder::new()
            .property(EVENT_NAME, text(1, MAX_NAME_CHARS))
            .required(EVENT_NAME)
            .property(
                USER_ID,
                string_or_integer("An integer is kept as its decimal text"),
            )
            .required(USER_ID)
            .property(
                TIME,
                OneOfBuilder::new()
                    .item(ObjectBuilder::new().schema_type(Type::Integer))
                    .item(ObjectBuilder::new().schema_type(Type::String))
                    .description(Some(
                        "Epoch milliseconds, or a date and time in one of the documented formats; \
                         required unless the project sets server_time",
                    )),
            )
            .property(SESSION_DUA, text(0, MAX_USER_AGENT_CHARS))
            .property(
                SESSION_IP,
                ObjectBuilder::new()
                    .schema_type(SchemaType::from_iter([Type::String, Type::Integer]))
                    .description(Some("An IPv4 or IPv6 address, or 0")),
            )
            .property(INSERT_ID, text(1, MAX_INSERT_ID_CHARS))
            .additional_properties(Some(AdditionalProperties::RefOr(property_value.into())))
            .max_properties(Some(MAX_PROPERTIES + 6))
            .description(Some(format!(
                "A flat object; fields other than the known ones are custom properties (a string or a \
                 number, at most {MAX_PROPERTIES})"
            )))
            .into()
    }
}

impl ToSchema for TrackEvent {}
