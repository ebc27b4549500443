//! The stages that reshape one document: `$project`, `$addFields`/`$set`, `$unset`.
//!
//! A specification is parsed into a tree of paths. `$project` is either an inclusion (the
//! listed fields, `_id` unless excluded, computed fields appended in the order written) or an
//! exclusion (everything but the listed fields); mixing the two is MongoDB's error 31253 /
//! 31254. A path through an array applies to each of its documents, as in MongoDB.

use bson::{Bson, Document};

use super::pipeline_error;
use crate::error::Result;
use crate::expr::{Dependencies, Expression, Variables};

/// What a projection does with one field.
#[derive(Debug, Clone)]
enum Spec {
    Include,
    Exclude,
    Computed(Expression),
    Nested(Tree),
}

/// Fields of one level of a projection, in the order written.
#[derive(Debug, Clone, Default)]
struct Tree {
    fields: Vec<(String, Spec)>,
}

impl Tree {
    fn child(&mut self, name: &str) -> &mut Spec {
        if let Some(position) = self.fields.iter().position(|(field, _)| field == name) {
            return &mut self.fields[position].1;
        }
        self.fields
            .push((name.to_string(), Spec::Nested(Tree::default())));
        &mut self.fields.last_mut().expect("just pushed").1
    }

    /// Adds `spec` at the dotted `path`.
    fn insert(&mut self, path: &str, spec: Spec, stage: &str) -> Result<()> {
        let (head, rest) = match path.split_once('.') {
            Some((head, rest)) => (head, Some(rest)),
            None => (path, None),
        };
        check_field_name(head, path, stage)?;
        match rest {
            None => {
                if self.fields.iter().any(|(field, _)| field == head) {
                    return Err(pipeline_error(
                        31250,
                        format!("Invalid {stage} :: caused by :: Path collision at {path}"),
                    ));
                }
                self.fields.push((head.to_string(), spec));
                Ok(())
            }
            Some(rest) => match self.child(head) {
                Spec::Nested(tree) => tree.insert(rest, spec, stage),
                _ => Err(pipeline_error(
                    31249,
                    format!("Invalid {stage} :: caused by :: Path collision at {path}"),
                )),
            },
        }
    }

    fn has(&self, wanted: fn(&Spec) -> bool) -> bool {
        self.fields.iter().any(|(_, spec)| match spec {
            Spec::Nested(tree) => tree.has(wanted),
            other => wanted(other),
        })
    }

    fn dependencies(&self, prefix: &str, found: &mut Dependencies) {
        for (field, spec) in &self.fields {
            let path = if prefix.is_empty() {
                field.clone()
            } else {
                format!("{prefix}.{field}")
            };
            match spec {
                Spec::Include => found.paths.push(path),
                Spec::Exclude => {}
                Spec::Computed(expression) => expression.dependencies(found),
                Spec::Nested(tree) => tree.dependencies(&path, found),
            }
        }
    }
}

fn check_field_name(name: &str, path: &str, stage: &str) -> Result<()> {
    if name.is_empty() {
        return Err(pipeline_error(
            40352,
            format!(
                "Invalid {stage} :: caused by :: FieldPath cannot be constructed with empty string"
            ),
        ));
    }
    if name.starts_with('$') {
        return Err(pipeline_error(
            16410,
            format!(
                "Invalid {stage} :: caused by :: FieldPath field names may not start with '$': '{path}'"
            ),
        ));
    }
    Ok(())
}

/// Whether `spec` is an inclusion flag (`1`, `true`, any non-zero number) or an exclusion
/// (`0`, `false`); `None` for an expression.
fn flag(value: &Bson) -> Option<bool> {
    match value {
        Bson::Boolean(b) => Some(*b),
        Bson::Int32(n) => Some(*n != 0),
        Bson::Int64(n) => Some(*n != 0),
        Bson::Double(n) => Some(*n != 0.0),
        Bson::Decimal128(n) => Some(n.to_string().parse::<f64>() != Ok(0.0)),
        _ => None,
    }
}

/// Whether a document is a nested specification (no field starts with `$`) rather than an
/// expression.
fn is_nested_spec(document: &Document) -> bool {
    !document.is_empty() && document.keys().all(|key| !key.starts_with('$'))
}

/// `$project`.
#[derive(Debug, Clone)]
pub(crate) struct Project {
    tree: Tree,
    inclusion: bool,
    /// Whether `_id` is kept (inclusion) or excluded (exclusion).
    id: Option<bool>,
}

impl Project {
    pub(crate) fn parse(spec: &Bson, names: &[String]) -> Result<Project> {
        let Bson::Document(spec) = spec else {
            return Err(pipeline_error(
                15969,
                "$project specification must be an object",
            ));
        };
        if spec.is_empty() {
            return Err(pipeline_error(
                51272,
                "Invalid $project :: caused by :: projection specification must have at least one field",
            ));
        }
        let mut tree = Tree::default();
        let mut id = None;
        parse_level(spec, "", &mut tree, &mut id, names, "$project")?;
        let includes = tree.has(|spec| matches!(spec, Spec::Include | Spec::Computed(_)));
        let excludes = tree.has(|spec| matches!(spec, Spec::Exclude));
        if includes && excludes {
            return Err(pipeline_error(
                31254,
                "Invalid $project :: caused by :: Cannot do exclusion on field in inclusion projection",
            ));
        }
        let inclusion = !excludes && (includes || id != Some(false));
        Ok(Project {
            tree,
            inclusion,
            id,
        })
    }

    /// `$unset`: an exclusion of the listed paths.
    pub(crate) fn unset(spec: &Bson) -> Result<Project> {
        let paths: Vec<&str> = match spec {
            Bson::String(path) => vec![path.as_str()],
            Bson::Array(items) if !items.is_empty() => items
                .iter()
                .map(|item| match item {
                    Bson::String(path) => Ok(path.as_str()),
                    _ => Err(pipeline_error(31120, "$unset specification must be a string or an array containing only string values")),
                })
                .collect::<Result<_>>()?,
            _ => return Err(pipeline_error(31002, "$unset specification must be a string or an array with at least one field")),
        };
        let mut tree = Tree::default();
        let mut id = None;
        for path in paths {
            if path == "_id" {
                id = Some(false);
            } else {
                tree.insert(path, Spec::Exclude, "$unset")?;
            }
        }
        Ok(Project {
            tree,
            inclusion: false,
            id,
        })
    }

    pub(crate) fn apply(&self, document: &Document, variables: &Variables) -> Result<Document> {
        if self.inclusion {
            let mut out = Document::new();
            if self.id != Some(false)
                && let Some(id) = document.get("_id")
                && !self.tree.fields.iter().any(|(field, _)| field == "_id")
            {
                out.insert("_id", id.clone());
            }
            include(&self.tree, document, &mut out);
            compute(&self.tree, document, document, variables, &mut out)?;
            Ok(out)
        } else {
            let mut out = document.clone();
            if self.id == Some(false) {
                out.remove("_id");
            }
            exclude(&self.tree, &mut out);
            Ok(out)
        }
    }

    pub(crate) fn dependencies(&self, found: &mut Dependencies) {
        if self.inclusion {
            found.paths.push("_id".to_string());
            self.tree.dependencies("", found);
        } else {
            found.whole_document = true;
        }
    }
}

fn parse_level(
    spec: &Document,
    prefix: &str,
    tree: &mut Tree,
    id: &mut Option<bool>,
    names: &[String],
    stage: &str,
) -> Result<()> {
    for (field, value) in spec {
        let path = if prefix.is_empty() {
            field.clone()
        } else {
            format!("{prefix}.{field}")
        };
        if path == "_id"
            && let Some(keep) = flag(value)
        {
            *id = Some(keep);
            continue;
        }
        match value {
            Bson::Document(nested) if is_nested_spec(nested) => {
                parse_level(nested, &path, tree, id, names, stage)?;
            }
            Bson::Document(nested) if nested.is_empty() => {
                return Err(pipeline_error(
                    51270,
                    format!(
                        "Invalid {stage} :: caused by :: An empty sub-projection is not a valid value. Found empty object at path"
                    ),
                ));
            }
            other => {
                let spec = match flag(other) {
                    Some(true) => Spec::Include,
                    Some(false) => Spec::Exclude,
                    None => Spec::Computed(Expression::parse_in(other, names)?),
                };
                tree.insert(&path, spec, stage)?;
            }
        }
    }
    Ok(())
}

/// Copies the included fields of `document` into `out`, in the document's order.
fn include(tree: &Tree, document: &Document, out: &mut Document) {
    for (field, value) in document {
        let Some((_, spec)) = tree.fields.iter().find(|(name, _)| name == field) else {
            continue;
        };
        match spec {
            Spec::Include => {
                out.insert(field.clone(), value.clone());
            }
            Spec::Nested(inner) => {
                if let Some(projected) = include_value(inner, value) {
                    out.insert(field.clone(), projected);
                }
            }
            Spec::Exclude | Spec::Computed(_) => {}
        }
    }
}

fn include_value(tree: &Tree, value: &Bson) -> Option<Bson> {
    match value {
        Bson::Document(document) => {
            let mut out = Document::new();
            include(tree, document, &mut out);
            Some(Bson::Document(out))
        }
        Bson::Array(items) => Some(Bson::Array(
            items
                .iter()
                .filter_map(|item| include_value(tree, item))
                .collect(),
        )),
        _ => None,
    }
}

/// Adds the computed fields of `tree`, evaluated on `root`, into `out`.
fn compute(
    tree: &Tree,
    root: &Document,
    current: &Document,
    variables: &Variables,
    out: &mut Document,
) -> Result<()> {
    for (field, spec) in &tree.fields {
        match spec {
            Spec::Computed(expression) => match expression.evaluate(root, variables)? {
                Some(value) => {
                    out.insert(field.clone(), value);
                }
                None => {
                    out.remove(field);
                }
            },
            Spec::Nested(inner) if inner.has(|spec| matches!(spec, Spec::Computed(_))) => {
                let nested_current = match current.get(field) {
                    Some(Bson::Document(document)) => document.clone(),
                    _ => Document::new(),
                };
                let mut nested = match out.get(field) {
                    Some(Bson::Document(document)) => document.clone(),
                    _ => Document::new(),
                };
                compute(inner, root, &nested_current, variables, &mut nested)?;
                out.insert(field.clone(), nested);
            }
            _ => {}
        }
    }
    Ok(())
}

fn exclude(tree: &Tree, document: &mut Document) {
    for (field, spec) in &tree.fields {
        match spec {
            Spec::Exclude => {
                document.remove(field);
            }
            Spec::Nested(inner) => {
                if let Some(value) = document.get_mut(field) {
                    exclude_value(inner, value);
                }
            }
            _ => {}
        }
    }
}

fn exclude_value(tree: &Tree, value: &mut Bson) {
    match value {
        Bson::Document(document) => exclude(tree, document),
        Bson::Array(items) => {
            for item in items {
                exclude_value(tree, item);
            }
        }
        _ => {}
    }
}

/// `$addFields` / `$set`: each path set to its expression's value (evaluated on the input
/// document), missing values removing the field.
#[derive(Debug, Clone)]
pub(crate) struct AddFields {
    fields: Vec<(Vec<String>, Expression)>,
}

impl AddFields {
    pub(crate) fn parse(stage: &str, spec: &Bson, names: &[String]) -> Result<AddFields> {
        let Bson::Document(spec) = spec else {
            return Err(pipeline_error(
                40272,
                format!(
                    "{stage} specification stage must be an object, got {}",
                    crate::path::describe(spec)
                ),
            ));
        };
        let mut fields = Vec::new();
        collect_fields(spec, &[], &mut fields, names, stage)?;
        Ok(AddFields { fields })
    }

    pub(crate) fn apply(&self, document: &Document, variables: &Variables) -> Result<Document> {
        let mut values = Vec::with_capacity(self.fields.len());
        for (path, expression) in &self.fields {
            values.push((path, expression.evaluate(document, variables)?));
        }
        let mut out = document.clone();
        for (path, value) in values {
            set_path(&mut out, path, value);
        }
        Ok(out)
    }

    pub(crate) fn dependencies(&self, found: &mut Dependencies) {
        found.whole_document = true;
        for (_, expression) in &self.fields {
            expression.dependencies(found);
        }
    }
}

fn collect_fields(
    spec: &Document,
    prefix: &[String],
    fields: &mut Vec<(Vec<String>, Expression)>,
    names: &[String],
    stage: &str,
) -> Result<()> {
    for (field, value) in spec {
        let mut path = prefix.to_vec();
        for part in field.split('.') {
            check_field_name(part, field, stage)?;
            path.push(part.to_string());
        }
        match value {
            Bson::Document(nested) if is_nested_spec(nested) => {
                collect_fields(nested, &path, fields, names, stage)?;
            }
            other => fields.push((path, Expression::parse_in(other, names)?)),
        }
    }
    Ok(())
}

/// Sets (or, for `None`, removes) the value at `path`, creating documents on the way and
/// applying to every document of an array it passes through.
pub(crate) fn set_path(document: &mut Document, path: &[String], value: Option<Bson>) {
    let (head, rest) = path.split_first().expect("a path has a component");
    if rest.is_empty() {
        match value {
            Some(value) => {
                document.insert(head.clone(), value);
            }
            None => {
                document.remove(head);
            }
        }
        return;
    }
    match document.get_mut(head) {
        Some(Bson::Document(inner)) => set_path(inner, rest, value),
        Some(Bson::Array(items)) => {
            for item in items {
                if let Bson::Document(inner) = item {
                    set_path(inner, rest, value.clone());
                }
            }
        }
        _ => {
            if value.is_some() {
                let mut inner = Document::new();
                set_path(&mut inner, rest, value);
                document.insert(head.clone(), inner);
            }
        }
    }
}
