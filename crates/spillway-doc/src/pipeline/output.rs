//! The writing stages, `$out` and `$merge`, as the caller executes them: their target and,
//! for `$merge`, what each output document means for the target document it matches.

use bson::{Bson, Document, doc};

use super::{Pipeline, Stage, pipeline_error};
use crate::error::Result;
use crate::expr::Variables;

/// A pipeline's final writing stage.
#[derive(Debug, Clone)]
pub enum Output {
    /// `$out`: the output replaces the target collection's documents.
    Out(OutSpec),
    /// `$merge`: each output document is merged into the target collection.
    Merge(MergeSpec),
}

/// `$out`'s target.
#[derive(Debug, Clone)]
pub struct OutSpec {
    database: Option<String>,
    collection: String,
}

impl OutSpec {
    /// The target collection.
    pub fn collection(&self) -> &str {
        &self.collection
    }

    /// The target database, when one was named.
    pub fn database(&self) -> Option<&str> {
        self.database.as_deref()
    }
}

/// `$merge`'s target and rules.
#[derive(Debug, Clone)]
pub struct MergeSpec {
    database: Option<String>,
    collection: String,
    on: Vec<String>,
    when_matched: WhenMatched,
    when_not_matched: WhenNotMatched,
    variables: Vec<(String, Bson)>,
}

#[derive(Debug, Clone)]
enum WhenMatched {
    Replace,
    KeepExisting,
    Merge,
    Fail,
    Pipeline(Box<Pipeline>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum WhenNotMatched {
    Insert,
    Discard,
    Fail,
}

/// What `$merge` does with one output document.
#[derive(Debug, Clone, PartialEq)]
pub enum MergeAction {
    /// Insert this document.
    Insert(Document),
    /// Replace the matched document by this one (its `_id` is the matched one's).
    Replace(Document),
    /// Leave the target as it is.
    Keep,
}

fn target(stage: &str, value: &Bson) -> Result<(Option<String>, String)> {
    match value {
        Bson::String(collection) if !collection.is_empty() => Ok((None, collection.clone())),
        Bson::Document(spec) => {
            let database = match spec.get("db") {
                None => None,
                Some(Bson::String(db)) => Some(db.clone()),
                Some(_) => {
                    return Err(pipeline_error(
                        13111,
                        format!("{stage}: 'db' must be a string"),
                    ));
                }
            };
            match spec.get("coll") {
                Some(Bson::String(collection)) if !collection.is_empty() => {
                    Ok((database, collection.clone()))
                }
                _ => Err(pipeline_error(
                    13111,
                    format!("{stage}: 'coll' must be a non-empty string"),
                )),
            }
        }
        _ => Err(pipeline_error(
            13111,
            format!("{stage} target must be a collection name or an object with 'db' and 'coll'"),
        )),
    }
}

impl Output {
    pub(super) fn parse(stage: &str, argument: &Bson, names: &[String]) -> Result<Output> {
        if stage == "$out" {
            let (database, collection) = target(stage, argument)?;
            return Ok(Output::Out(OutSpec {
                database,
                collection,
            }));
        }
        let spec = match argument {
            Bson::Document(spec) if !spec.contains_key("coll") => spec.clone(),
            other => doc! { "into": other.clone() },
        };
        let (database, collection) = target(
            "$merge",
            spec.get("into")
                .ok_or_else(|| pipeline_error(40414, "$merge requires an 'into' field"))?,
        )?;
        let mut merge = MergeSpec {
            database,
            collection,
            on: vec!["_id".to_string()],
            when_matched: WhenMatched::Merge,
            when_not_matched: WhenNotMatched::Insert,
            variables: Vec::new(),
        };
        let _ = names;
        let mut let_names: Vec<String> = Vec::new();
        if let Some(Bson::Document(vars)) = spec.get("let") {
            for (name, value) in vars {
                // Only constants and `$$new` are meaningful here; `$$new` is bound per document.
                merge.variables.push((name.clone(), value.clone()));
                let_names.push(name.clone());
            }
        }
        if !let_names.iter().any(|name| name == "new") {
            let_names.push("new".to_string());
        }
        for (key, value) in &spec {
            match key.as_str() {
                "into" | "let" => {}
                "on" => {
                    merge.on = match value {
                        Bson::String(field) => vec![field.clone()],
                        Bson::Array(fields) if !fields.is_empty() => fields
                            .iter()
                            .map(|field| match field {
                                Bson::String(field) => Ok(field.clone()),
                                _ => Err(pipeline_error(
                                    51134,
                                    "$merge 'on' array elements must be strings",
                                )),
                            })
                            .collect::<Result<_>>()?,
                        _ => {
                            return Err(pipeline_error(
                                51186,
                                "$merge 'on' field must be a string or an array of strings",
                            ));
                        }
                    };
                }
                "whenMatched" => {
                    merge.when_matched = match value {
                        Bson::String(mode) => match mode.as_str() {
                            "replace" => WhenMatched::Replace,
                            "keepExisting" => WhenMatched::KeepExisting,
                            "merge" => WhenMatched::Merge,
                            "fail" => WhenMatched::Fail,
                            other => {
                                return Err(pipeline_error(
                                    ErrorCodes::BAD_VALUE,
                                    format!(
                                        "Enumeration value '{other}' for field 'whenMatched' is not a valid value"
                                    ),
                                ));
                            }
                        },
                        Bson::Array(stages) => {
                            let stages = stages
                                .iter()
                                .map(|stage| match stage {
                                    Bson::Document(stage) => Ok(stage.clone()),
                                    _ => Err(pipeline_error(
                                        ErrorCodes::TYPE_MISMATCH,
                                        "each whenMatched stage must be an object",
                                    )),
                                })
                                .collect::<Result<Vec<_>>>()?;
                            let pipeline = Pipeline::parse_in(&stages, &let_names, false)?;
                            for stage in pipeline.stages() {
                                if !matches!(
                                    stage,
                                    Stage::AddFields(_) | Stage::Project(_) | Stage::ReplaceRoot(_)
                                ) {
                                    return Err(pipeline_error(
                                        ErrorCodes::INVALID_OPTIONS,
                                        "$merge's whenMatched pipeline may only contain $addFields, $set, $project, $unset, $replaceRoot and $replaceWith",
                                    ));
                                }
                            }
                            WhenMatched::Pipeline(Box::new(pipeline))
                        }
                        _ => {
                            return Err(pipeline_error(
                                ErrorCodes::TYPE_MISMATCH,
                                "$merge 'whenMatched' must be a string or an array",
                            ));
                        }
                    };
                }
                "whenNotMatched" => {
                    merge.when_not_matched = match value {
                        Bson::String(mode) => match mode.as_str() {
                            "insert" => WhenNotMatched::Insert,
                            "discard" => WhenNotMatched::Discard,
                            "fail" => WhenNotMatched::Fail,
                            other => {
                                return Err(pipeline_error(
                                    ErrorCodes::BAD_VALUE,
                                    format!(
                                        "Enumeration value '{other}' for field 'whenNotMatched' is not a valid value"
                                    ),
                                ));
                            }
                        },
                        _ => {
                            return Err(pipeline_error(
                                ErrorCodes::TYPE_MISMATCH,
                                "$merge 'whenNotMatched' must be a string",
                            ));
                        }
                    };
                }
                other => {
                    return Err(pipeline_error(
                        40415,
                        format!("BSON field '$merge.{other}' is an unknown field"),
                    ));
                }
            }
        }
        Ok(Output::Merge(merge))
    }

    /// The stage, for `explain`.
    pub fn describe(&self) -> Document {
        match self {
            Output::Out(spec) => doc! { "$out": &spec.collection },
            Output::Merge(spec) => {
                doc! { "$merge": { "into": &spec.collection, "on": spec.on.clone() } }
            }
        }
    }

    /// The target collection.
    pub fn collection(&self) -> &str {
        match self {
            Output::Out(spec) => &spec.collection,
            Output::Merge(spec) => &spec.collection,
        }
    }

    /// The target database, when one was named.
    pub fn database(&self) -> Option<&str> {
        match self {
            Output::Out(spec) => spec.database.as_deref(),
            Output::Merge(spec) => spec.database.as_deref(),
        }
    }
}

struct ErrorCodes;

impl ErrorCodes {
    const BAD_VALUE: i32 = 2;
    const TYPE_MISMATCH: i32 = 14;
    const INVALID_OPTIONS: i32 = 72;
}

impl MergeSpec {
    /// The target collection.
    pub fn collection(&self) -> &str {
        &self.collection
    }

    /// The filter that finds the target document an output document matches: equality on
    /// each `on` field.
    pub fn match_filter(&self, document: &Document) -> Result<Document> {
        let mut filter = Document::new();
        for field in &self.on {
            let path = crate::path::FieldPath::parse(field)?;
            match crate::path::get(document, &path) {
                None | Some(Bson::Null | Bson::Undefined | Bson::Array(_)) => {
                    return Err(pipeline_error(
                        51132,
                        format!(
                            "$merge write error: 'on' field '{field}' cannot be missing, null, undefined or an array"
                        ),
                    ));
                }
                Some(value) => {
                    filter.insert(field.clone(), doc! { "$eq": value.clone() });
                }
            }
        }
        Ok(filter)
    }

    /// What to write for output document `new`, given the target document it matched.
    pub fn decide(&self, existing: Option<&Document>, new: Document) -> Result<MergeAction> {
        let Some(existing) = existing else {
            return match self.when_not_matched {
                WhenNotMatched::Insert => Ok(MergeAction::Insert(new)),
                WhenNotMatched::Discard => Ok(MergeAction::Keep),
                WhenNotMatched::Fail => Err(pipeline_error(
                    13113,
                    "$merge could not find a matching document in the target collection for at least one document in the source collection",
                )),
            };
        };
        let with_id = |mut document: Document| {
            if let Some(id) = existing.get("_id") {
                document.insert("_id", id.clone());
            }
            document
        };
        match &self.when_matched {
            WhenMatched::Replace => Ok(MergeAction::Replace(with_id(new))),
            WhenMatched::KeepExisting => Ok(MergeAction::Keep),
            WhenMatched::Merge => {
                let mut merged = existing.clone();
                for (key, value) in new {
                    merged.insert(key, value);
                }
                Ok(MergeAction::Replace(with_id(merged)))
            }
            WhenMatched::Fail => Err(pipeline_error(
                11000,
                format!(
                    "$merge failed: a document of '{}' matches an output document on {:?} and whenMatched is 'fail'",
                    self.collection, self.on
                ),
            )),
            WhenMatched::Pipeline(pipeline) => {
                let mut user: Vec<(String, Bson)> = self.variables.clone();
                if !user.iter().any(|(name, _)| name == "new") {
                    user.push(("new".to_string(), Bson::Document(new)));
                }
                let variables = Variables {
                    user,
                    ..Variables::default()
                };
                let mut document = existing.clone();
                for stage in pipeline.stages() {
                    document = super::exec::reshape(stage, document, &variables)?;
                }
                Ok(MergeAction::Replace(with_id(document)))
            }
        }
    }
}
