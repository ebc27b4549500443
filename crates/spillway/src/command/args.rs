//! Reading a command document's fields with MongoDB's parse errors: a field of the wrong type
//! is 14 TypeMismatch, a missing required field 40414, an unknown field 40415 (as MongoDB's
//! IDL parser reports them, `BSON field 'find.limit' is the wrong type 'string'...`).
//!
//! Fields every command may carry (`$db`, `lsid`, `txnNumber`, `$clusterTime`, read and
//! write concerns...) are accepted by every command and read by the session layer, not here.
//! This module must never execute anything.

use bson::{Bson, Document};
use spillway_doc::expr::type_name as bson_type_name;

use super::error::{CommandError, CommandResult};

/// Generic arguments that any command may carry, handled by the command layer itself or
/// meaningless on a single node (read concern, read preference, API version).
pub const GENERIC_FIELDS: &[&str] = &[
    "$db",
    "lsid",
    "txnNumber",
    "autocommit",
    "startTransaction",
    "stmtId",
    "$clusterTime",
    "readConcern",
    "writeConcern",
    "$readPreference",
    "maxTimeMS",
    "comment",
    "apiVersion",
    "apiStrict",
    "apiDeprecationErrors",
    "$audit",
    "$client",
    "mayBypassWriteBlocking",
];

/// A command document being read: its name, and typed access to its fields.
pub(crate) struct Args<'a> {
    pub(crate) name: &'a str,
    pub(crate) document: &'a Document,
}

impl<'a> Args<'a> {
    pub(crate) fn new(name: &'a str, document: &'a Document) -> Args<'a> {
        Args { name, document }
    }

    /// Refuses fields that are neither generic nor in `known` (the command's own, its name
    /// included).
    pub(crate) fn only(&self, known: &[&str]) -> CommandResult<()> {
        for key in self.document.keys() {
            if key != self.name
                && !known.contains(&key.as_str())
                && !GENERIC_FIELDS.contains(&key.as_str())
            {
                return Err(CommandError::new(
                    40415,
                    format!("BSON field '{}.{key}' is an unknown field.", self.name),
                ));
            }
        }
        Ok(())
    }

    pub(crate) fn get(&self, field: &str) -> Option<&'a Bson> {
        match self.document.get(field) {
            None | Some(Bson::Null) => None,
            Some(value) => Some(value),
        }
    }

    fn wrong_type(&self, field: &str, value: &Bson, expected: &str) -> CommandError {
        CommandError::type_mismatch(format!(
            "BSON field '{}.{field}' is the wrong type '{}', expected type '{expected}'",
            self.name,
            bson_type_name(Some(value))
        ))
    }

    pub(crate) fn missing(&self, field: &str) -> CommandError {
        CommandError::new(
            40414,
            format!(
                "BSON field '{}.{field}' is missing but a required field",
                self.name
            ),
        )
    }

    /// The command's own value as a collection name (`{ find: "books" }`).
    pub(crate) fn collection(&self) -> CommandResult<&'a str> {
        match self.document.get(self.name) {
            Some(Bson::String(name)) => Ok(name),
            Some(other) => Err(CommandError::new(
                73,
                format!(
                    "collection name has invalid type {}",
                    bson_type_name(Some(other))
                ),
            )),
            None => Err(self.missing(self.name)),
        }
    }

    pub(crate) fn string(&self, field: &str) -> CommandResult<Option<&'a str>> {
        match self.get(field) {
            None => Ok(None),
            Some(Bson::String(value)) => Ok(Some(value)),
            Some(other) => Err(self.wrong_type(field, other, "string")),
        }
    }

    pub(crate) fn bool(&self, field: &str) -> CommandResult<Option<bool>> {
        match self.get(field) {
            None => Ok(None),
            Some(Bson::Boolean(value)) => Ok(Some(*value)),
            // MongoDB's IDL accepts numbers for booleans ("safeBool").
            Some(Bson::Int32(value)) => Ok(Some(*value != 0)),
            Some(Bson::Int64(value)) => Ok(Some(*value != 0)),
            Some(Bson::Double(value)) => Ok(Some(*value != 0.0)),
            Some(other) => Err(self.wrong_type(field, other, "bool")),
        }
    }

    /// A whole number given as int32, int64 or an integral double.
    pub(crate) fn integer(&self, field: &str) -> CommandResult<Option<i64>> {
        match self.get(field) {
            None => Ok(None),
            Some(Bson::Int32(value)) => Ok(Some(i64::from(*value))),
            Some(Bson::Int64(value)) => Ok(Some(*value)),
            Some(Bson::Double(value)) if value.fract() == 0.0 && value.is_finite() => {
                Ok(Some(*value as i64))
            }
            Some(other) => Err(self.wrong_type(field, other, "long")),
        }
    }

    /// A whole number that must not be negative.
    pub(crate) fn count(&self, field: &str) -> CommandResult<Option<u64>> {
        match self.integer(field)? {
            None => Ok(None),
            Some(value) => u64::try_from(value).map(Some).map_err(|_| {
                CommandError::bad_value(format!(
                    "BSON field '{field}' value must be >= 0, actual value '{value}'"
                ))
            }),
        }
    }

    pub(crate) fn document(&self, field: &str) -> CommandResult<Option<&'a Document>> {
        match self.get(field) {
            None => Ok(None),
            Some(Bson::Document(value)) => Ok(Some(value)),
            Some(other) => Err(self.wrong_type(field, other, "object")),
        }
    }

    pub(crate) fn array(&self, field: &str) -> CommandResult<Option<&'a Vec<Bson>>> {
        match self.get(field) {
            None => Ok(None),
            Some(Bson::Array(value)) => Ok(Some(value)),
            Some(other) => Err(self.wrong_type(field, other, "array")),
        }
    }

    /// An array whose every element is a document.
    pub(crate) fn documents(&self, field: &str) -> CommandResult<Option<Vec<Document>>> {
        let Some(values) = self.array(field)? else {
            return Ok(None);
        };
        values
            .iter()
            .enumerate()
            .map(|(index, value)| match value {
                Bson::Document(document) => Ok(document.clone()),
                other => Err(CommandError::type_mismatch(format!(
                    "BSON field '{}.{field}.{index}' is the wrong type '{}', expected type 'object'",
                    self.name,
                    bson_type_name(Some(other))
                ))),
            })
            .collect::<CommandResult<Vec<_>>>()
            .map(Some)
    }
}
