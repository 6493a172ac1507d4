//! The documented shapes of the `/metadata` bodies. The handlers read a JSON object (`PATCH`) and a JSON
//! array (`DELETE`) and check each name and value with `scoring::names`; these schemas state the same rules
//! (a test of `names` holds the patterns to the checks), so a client generated from the document sends
//! what the service takes.

use utoipa::openapi::schema::{AdditionalProperties, ArrayBuilder, ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

use scoring::names::{field_schema, removable_field_schema, value_schema, MAX_FIELDS};

/// The body of `PATCH`: field names and their values.
pub struct MetadataSet;

impl PartialSchema for MetadataSet {
    fn schema() -> RefOr<Schema> {
        let mut object = ObjectBuilder::new()
            .schema_type(Type::Object)
            .description(Some(
                "Field names and values (strings, numbers or booleans, kept as text)",
            ))
            .additional_properties(Some(AdditionalProperties::RefOr(value_schema())))
            .max_properties(Some(MAX_FIELDS))
            .examples([serde_json::json!({"queue": "billing", "priority": 2})])
            .build();
        object.property_names = Some(Box::new(field_schema().into()));
        object.into()
    }
}

impl ToSchema for MetadataSet {}

/// The body of `DELETE`: field names.
pub struct MetadataRemove;

impl PartialSchema for MetadataRemove {
    fn schema() -> RefOr<Schema> {
        ArrayBuilder::new()
            .items(removable_field_schema())
            .max_items(Some(MAX_FIELDS))
            .description(Some(
                "Field names; names the call does not have are ignored",
            ))
            .examples([serde_json::json!(["queue"])])
            .into()
    }
}

impl ToSchema for MetadataRemove {}
