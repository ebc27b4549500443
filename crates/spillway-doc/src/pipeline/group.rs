//! `$group` and its accumulators, and the stages built on them (`$bucket`, `$bucketAuto`,
//! `$sortByCount`, `$count`). A group holds only its accumulators' state, never the documents.
//!
//! Under a collation (the pipeline's, in [`Variables::collation`]) keys equal under it are
//! one group, and the accumulators that compare values compare strings under it, as
//! MongoDB's do: `$min`/`$max`/`$minN`/`$maxN` by [`compare_collated`], `$addToSet` with a
//! [`ValueSet`] under it, `$top`/`$bottom`(`N`) by their `sortBy` collated with
//! [`Group::collate`].

use std::collections::HashMap;

use bson::{Bson, Document};

use super::pipeline_error;
use crate::collation::Collation;
use crate::compare::compare_collated;
use crate::error::Result;
use crate::expr::num::Num;
use crate::expr::{Dependencies, Expression, Variables};
use crate::key;
use crate::sort::SortSpec;
use crate::value_set::ValueSet;

/// One accumulator of a `$group` output field.
#[derive(Debug, Clone)]
pub(crate) struct Accumulator {
    kind: Kind,
    input: Expression,
    /// `n` of the `N` accumulators.
    n: Option<Expression>,
    /// `sortBy` of `$top`/`$bottom`(`N`).
    sort: Option<SortSpec>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Sum,
    Avg,
    Min,
    Max,
    First,
    Last,
    Push,
    AddToSet,
    MergeObjects,
    StdDevPop,
    StdDevSamp,
    Top,
    Bottom,
    TopN,
    BottomN,
    FirstN,
    LastN,
    MaxN,
    MinN,
}

impl Accumulator {
    /// Parses `{$sum: <expr>}` and the others.
    pub(crate) fn parse(field: &str, spec: &Bson, names: &[String]) -> Result<Accumulator> {
        let Bson::Document(spec) = spec else {
            return Err(pipeline_error(
                40234,
                format!("The field '{field}' must be an accumulator object"),
            ));
        };
        if spec.len() != 1 {
            return Err(pipeline_error(
                40238,
                format!("The field '{field}' must specify one accumulator"),
            ));
        }
        let (name, argument) = spec.iter().next().expect("one field");
        let kind = match name.as_str() {
            "$sum" => Kind::Sum,
            "$avg" => Kind::Avg,
            "$min" => Kind::Min,
            "$max" => Kind::Max,
            "$first" => Kind::First,
            "$last" => Kind::Last,
            "$push" => Kind::Push,
            "$addToSet" => Kind::AddToSet,
            "$mergeObjects" => Kind::MergeObjects,
            "$stdDevPop" => Kind::StdDevPop,
            "$stdDevSamp" => Kind::StdDevSamp,
            "$count" => {
                if !matches!(argument, Bson::Document(d) if d.is_empty()) {
                    return Err(pipeline_error(
                        ErrorCodes::BAD_VALUE,
                        "$count takes no arguments, i.e. $count:{}",
                    ));
                }
                return Ok(Accumulator {
                    kind: Kind::Sum,
                    input: Expression::parse(&Bson::Int32(1))?,
                    n: None,
                    sort: None,
                });
            }
            "$top" => Kind::Top,
            "$bottom" => Kind::Bottom,
            "$topN" => Kind::TopN,
            "$bottomN" => Kind::BottomN,
            "$firstN" => Kind::FirstN,
            "$lastN" => Kind::LastN,
            "$maxN" => Kind::MaxN,
            "$minN" => Kind::MinN,
            other => {
                return Err(pipeline_error(
                    15952,
                    format!("unknown group operator '{other}'"),
                ));
            }
        };
        match kind {
            Kind::Top | Kind::Bottom | Kind::TopN | Kind::BottomN => {
                let Bson::Document(options) = argument else {
                    return Err(pipeline_error(
                        5788001,
                        format!("specification of {name} must be an object"),
                    ));
                };
                let with_n = matches!(kind, Kind::TopN | Kind::BottomN);
                let output = options.get("output").ok_or_else(|| {
                    pipeline_error(5788004, format!("{name} requires an 'output' field"))
                })?;
                let sort_by = match options.get("sortBy") {
                    Some(Bson::Document(sort)) => SortSpec::parse(sort)
                        .map_err(|error| pipeline_error(5788005, format!("{name}: {error}")))?,
                    _ => {
                        return Err(pipeline_error(
                            5788005,
                            format!("{name} requires a 'sortBy' object"),
                        ));
                    }
                };
                let n = if with_n {
                    Some(Expression::parse_in(
                        options.get("n").ok_or_else(|| {
                            pipeline_error(5787906, format!("{name} requires an 'n' field"))
                        })?,
                        names,
                    )?)
                } else {
                    None
                };
                for key in options.keys() {
                    if !["output", "sortBy", "n"].contains(&key.as_str()) || (!with_n && key == "n")
                    {
                        return Err(pipeline_error(
                            5788002,
                            format!("Unknown argument to {name} '{key}'"),
                        ));
                    }
                }
                Ok(Accumulator {
                    kind,
                    input: Expression::parse_in(output, names)?,
                    n,
                    sort: Some(sort_by),
                })
            }
            Kind::FirstN | Kind::LastN | Kind::MaxN | Kind::MinN => {
                let Bson::Document(options) = argument else {
                    return Err(pipeline_error(
                        5787801,
                        format!("specification of {name} must be an object"),
                    ));
                };
                let input = options.get("input").ok_or_else(|| {
                    pipeline_error(5787907, format!("{name} requires an 'input' field"))
                })?;
                let n = options.get("n").ok_or_else(|| {
                    pipeline_error(5787906, format!("{name} requires an 'n' field"))
                })?;
                Ok(Accumulator {
                    kind,
                    input: Expression::parse_in(input, names)?,
                    n: Some(Expression::parse_in(n, names)?),
                    sort: None,
                })
            }
            _ => {
                if let Bson::Array(_) = argument {
                    return Err(pipeline_error(
                        40237,
                        format!("The {name} accumulator is a unary operator"),
                    ));
                }
                Ok(Accumulator {
                    kind,
                    input: Expression::parse_in(argument, names)?,
                    n: None,
                    sort: None,
                })
            }
        }
    }

    pub(crate) fn dependencies(&self, found: &mut Dependencies) {
        self.input.dependencies(found);
        if let Some(sort) = &self.sort {
            found
                .paths
                .extend(sort.keys().iter().map(|key| key.path.as_str().to_string()));
        }
    }

    /// The state before any value: a `$addToSet` keeps values once under `collation`.
    fn start(&self, collation: &Collation) -> State {
        match self.kind {
            Kind::Sum => State::Sum(Num::Int(0)),
            Kind::Avg | Kind::StdDevPop | Kind::StdDevSamp => State::Numbers(0.0, 0.0, 0),
            Kind::Min | Kind::Max | Kind::First | Kind::Last | Kind::Top | Kind::Bottom => {
                State::One(None, false)
            }
            Kind::MergeObjects => State::Object(Document::new()),
            Kind::AddToSet => State::Set(ValueSet::new(collation)),
            _ => State::Many(Vec::new()),
        }
    }

    /// Makes `sortBy` (of `$top`/`$bottom`(`N`)) order strings under `collation`.
    fn collate(&mut self, collation: &Collation) {
        if let Some(sort) = self.sort.take() {
            self.sort = Some(sort.collated(collation));
        }
    }

    /// Adds one document's value to `state`.
    fn add(&self, state: &mut State, document: &Document, variables: &Variables) -> Result<()> {
        let value = self.input.evaluate(document, variables)?;
        let collation = &variables.collation;
        match (self.kind, state) {
            (Kind::Sum, State::Sum(total)) => {
                if let Some(n) = value.as_ref().and_then(Num::of) {
                    *total = total.add(n);
                }
            }
            (
                Kind::Avg | Kind::StdDevPop | Kind::StdDevSamp,
                State::Numbers(sum, squares, count),
            ) => {
                if let Some(n) = value.as_ref().and_then(Num::of) {
                    let x = n.as_f64();
                    *sum += x;
                    *squares += x * x;
                    *count += 1;
                }
            }
            (Kind::Min | Kind::Max, State::One(best, _)) => {
                if let Some(value) = value.filter(|v| !matches!(v, Bson::Null | Bson::Undefined)) {
                    let wanted = if self.kind == Kind::Min {
                        std::cmp::Ordering::Less
                    } else {
                        std::cmp::Ordering::Greater
                    };
                    if best.as_ref().is_none_or(|current| {
                        compare_collated(&value, current, collation) == wanted
                    }) {
                        *best = Some(value);
                    }
                }
            }
            (Kind::First, State::One(first, seen)) => {
                if !*seen {
                    *first = Some(value.unwrap_or(Bson::Null));
                    *seen = true;
                }
            }
            (Kind::Last, State::One(last, seen)) => {
                *last = Some(value.unwrap_or(Bson::Null));
                *seen = true;
            }
            (Kind::Top | Kind::Bottom, State::One(best, _)) => {
                let candidate = sort_entry(self.sort.as_ref().expect("sortBy"), document, value);
                let sort = self.sort.as_ref().expect("sortBy");
                let better = match best {
                    None => true,
                    Some(Bson::Array(current)) => {
                        let order =
                            sort.compare_values(entry_keys(&candidate), entry_keys(current));
                        if self.kind == Kind::Top {
                            order.is_lt()
                        } else {
                            order.is_ge()
                        }
                    }
                    Some(_) => true,
                };
                if better {
                    *best = Some(Bson::Array(candidate));
                }
            }
            (Kind::Push, State::Many(items)) => {
                if let Some(value) = value {
                    items.push(value);
                }
            }
            (Kind::AddToSet, State::Set(set)) => {
                if let Some(value) = value {
                    set.insert(value);
                }
            }
            (Kind::MergeObjects, State::Object(merged)) => match value {
                None | Some(Bson::Null | Bson::Undefined) => {}
                Some(Bson::Document(document)) => merged.extend(document),
                Some(other) => {
                    return Err(pipeline_error(
                        40400,
                        format!(
                            "$mergeObjects requires object inputs, but input {other} is of type {}",
                            crate::expr::num::type_name(Some(&other))
                        ),
                    ));
                }
            },
            (
                Kind::FirstN | Kind::LastN | Kind::MaxN | Kind::MinN | Kind::TopN | Kind::BottomN,
                State::Many(items),
            ) => {
                let n = self.count(document, variables)?;
                let entry = match self.kind {
                    Kind::TopN | Kind::BottomN => Bson::Array(sort_entry(
                        self.sort.as_ref().expect("sortBy"),
                        document,
                        value,
                    )),
                    Kind::MaxN | Kind::MinN => match value {
                        None | Some(Bson::Null | Bson::Undefined) => return Ok(()),
                        Some(value) => value,
                    },
                    _ => value.unwrap_or(Bson::Null),
                };
                match self.kind {
                    Kind::FirstN => {
                        if items.len() < n {
                            items.push(entry);
                        }
                    }
                    Kind::LastN => {
                        items.push(entry);
                        if items.len() > n {
                            items.remove(0);
                        }
                    }
                    _ => {
                        items.push(entry);
                        let order = |a: &Bson, b: &Bson| match self.kind {
                            Kind::MaxN => compare_collated(b, a, collation),
                            Kind::MinN => compare_collated(a, b, collation),
                            Kind::TopN => self
                                .sort
                                .as_ref()
                                .expect("sortBy")
                                .compare_values(entry_keys(array(a)), entry_keys(array(b))),
                            _ => self
                                .sort
                                .as_ref()
                                .expect("sortBy")
                                .compare_values(entry_keys(array(b)), entry_keys(array(a))),
                        };
                        items.sort_by(order);
                        items.truncate(n);
                    }
                }
            }
            _ => unreachable!("each kind starts with its state"),
        }
        Ok(())
    }

    fn count(&self, document: &Document, variables: &Variables) -> Result<usize> {
        let n = self.n.as_ref().expect("n").evaluate(document, variables)?;
        match n.as_ref().and_then(Num::of).and_then(Num::as_i64) {
            Some(n) if n > 0 => Ok(n as usize),
            _ => Err(pipeline_error(5787908, "'n' must be a positive integer")),
        }
    }

    /// The accumulated value.
    fn finish(&self, state: State) -> Bson {
        match (self.kind, state) {
            (_, State::Sum(total)) => total.to_bson(),
            (Kind::Avg, State::Numbers(sum, _, count)) => {
                if count == 0 {
                    Bson::Null
                } else {
                    Bson::Double(sum / count as f64)
                }
            }
            (kind, State::Numbers(sum, squares, count)) => {
                let sample = kind == Kind::StdDevSamp;
                if count == 0 || (sample && count < 2) {
                    return Bson::Null;
                }
                let n = count as f64;
                let variance = (squares - sum * sum / n) / if sample { n - 1.0 } else { n };
                Bson::Double(variance.max(0.0).sqrt())
            }
            (Kind::Top | Kind::Bottom, State::One(best, _)) => match best {
                Some(Bson::Array(mut entry)) => entry.pop().unwrap_or(Bson::Null),
                _ => Bson::Null,
            },
            (_, State::One(value, _)) => value.unwrap_or(Bson::Null),
            (Kind::TopN | Kind::BottomN, State::Many(items)) => Bson::Array(
                items
                    .into_iter()
                    .map(|item| match item {
                        Bson::Array(mut entry) => entry.pop().unwrap_or(Bson::Null),
                        other => other,
                    })
                    .collect(),
            ),
            (_, State::Many(items)) => Bson::Array(items),
            (_, State::Set(set)) => Bson::Array(set.into_vec()),
            (_, State::Object(document)) => Bson::Document(document),
        }
    }
}

/// `[sort values..., output]`: what `$top` and friends keep of a document.
fn sort_entry(sort: &SortSpec, document: &Document, value: Option<Bson>) -> Vec<Bson> {
    let mut entry = sort.sort_values(document);
    entry.push(value.unwrap_or(Bson::Null));
    entry
}

fn entry_keys(entry: &[Bson]) -> &[Bson] {
    &entry[..entry.len().saturating_sub(1)]
}

fn array(value: &Bson) -> &[Bson] {
    match value {
        Bson::Array(items) => items,
        _ => &[],
    }
}

struct ErrorCodes;

impl ErrorCodes {
    const BAD_VALUE: i32 = 2;
}

#[derive(Debug)]
enum State {
    Sum(Num),
    /// Sum, sum of squares, count.
    Numbers(f64, f64, u64),
    /// The value so far; whether one was seen.
    One(Option<Bson>, bool),
    Many(Vec<Bson>),
    /// `$addToSet`'s values.
    Set(ValueSet),
    Object(Document),
}

/// `$group`: the key expression and the output fields.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub(crate) id: Expression,
    pub(crate) fields: Vec<(String, Accumulator)>,
}

impl Group {
    pub(crate) fn parse(spec: &Bson, names: &[String]) -> Result<Group> {
        let Bson::Document(spec) = spec else {
            return Err(pipeline_error(
                15947,
                "a group's fields must be specified in an object",
            ));
        };
        let mut id = None;
        let mut fields = Vec::new();
        for (field, value) in spec {
            if field == "_id" {
                id = Some(Expression::parse_in(value, names)?);
            } else if field.starts_with('$') || field.contains('.') {
                return Err(pipeline_error(
                    40236,
                    format!("The field name '{field}' cannot contain '.' or start with '$'"),
                ));
            } else {
                fields.push((field.clone(), Accumulator::parse(field, value, names)?));
            }
        }
        let id =
            id.ok_or_else(|| pipeline_error(15955, "a group specification must include an _id"))?;
        Ok(Group { id, fields })
    }

    /// Makes the accumulators' `sortBy` order strings under `collation` (the pipeline's, as
    /// a `$sort` stage's).
    pub(crate) fn collate(&mut self, collation: &Collation) {
        for (_, accumulator) in &mut self.fields {
            accumulator.collate(collation);
        }
    }

    pub(crate) fn dependencies(&self, found: &mut Dependencies) {
        self.id.dependencies(found);
        for (_, accumulator) in &self.fields {
            accumulator.dependencies(found);
        }
    }

    /// Groups `input`, holding one state per group, in the order groups first appear.
    pub(crate) fn run(
        &self,
        input: &mut dyn Iterator<Item = Result<Document>>,
        variables: &Variables,
    ) -> Result<Vec<Document>> {
        // Group keys are the user's values: foldhash's per-process seed, not a fixed hash.
        let mut index: HashMap<Vec<u8>, usize, foldhash::fast::RandomState> = HashMap::default();
        let mut groups: Vec<(Bson, Vec<State>)> = Vec::new();
        let mut encoded = Vec::new();
        for document in input {
            let document = document?;
            let key = self
                .id
                .evaluate(&document, variables)?
                .unwrap_or(Bson::Null);
            encoded.clear();
            if variables.collation.is_simple() {
                key::encode(&key, &mut encoded);
            } else {
                // Keys equal under the collation are one group, shown by its first key.
                key::encode(&variables.collation.key_value(&key), &mut encoded);
            }
            let position = if let Some(&position) = index.get(encoded.as_slice()) {
                position
            } else {
                groups.push((
                    key,
                    self.fields
                        .iter()
                        .map(|(_, acc)| acc.start(&variables.collation))
                        .collect(),
                ));
                index.insert(encoded.clone(), groups.len() - 1);
                groups.len() - 1
            };
            let states = &mut groups[position].1;
            for ((_, accumulator), state) in self.fields.iter().zip(states.iter_mut()) {
                accumulator.add(state, &document, variables)?;
            }
        }
        Ok(groups
            .into_iter()
            .map(|(key, states)| {
                let mut out = Document::new();
                out.insert("_id", key);
                for ((field, accumulator), state) in self.fields.iter().zip(states) {
                    out.insert(field.clone(), accumulator.finish(state));
                }
                out
            })
            .collect())
    }

    /// The output fields only (`$bucket`'s `output`), starting empty: used with `run_keyed`.
    pub(crate) fn fold_into(
        &self,
        states: &mut Vec<Vec<StateBox>>,
        position: usize,
        document: &Document,
        variables: &Variables,
    ) -> Result<()> {
        while states.len() <= position {
            states.push(
                self.fields
                    .iter()
                    .map(|(_, acc)| StateBox(acc.start(&variables.collation)))
                    .collect(),
            );
        }
        for ((_, accumulator), state) in self.fields.iter().zip(states[position].iter_mut()) {
            accumulator.add(&mut state.0, document, variables)?;
        }
        Ok(())
    }

    /// The output fields of one bucket's states.
    pub(crate) fn finish_into(&self, states: Vec<StateBox>, out: &mut Document) {
        for ((field, accumulator), state) in self.fields.iter().zip(states) {
            out.insert(field.clone(), accumulator.finish(state.0));
        }
    }
}

/// An accumulator's state, opaque outside this module.
#[derive(Debug)]
pub(crate) struct StateBox(State);
