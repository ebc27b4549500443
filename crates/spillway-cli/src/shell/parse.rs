//! Turns one statement's text into a [`Command`].
//!
//! The text is parsed with `spillway_doc`'s expression parser (the same one that reads
//! mongosh literals), the method chain `db.<collection>.<method>(...).<cursor method>(...)`
//! is walked here, and every argument is evaluated to BSON with `spillway_doc::shell::evaluate`,
//! which only knows literals and constructors such as `ObjectId(...)`: a statement can never
//! run code. Errors point at the argument, option or name that is wrong, with positions in
//! the whole input. This module must never touch a database.

use spillway::bson::{Bson, Document};
use spillway_doc::DocError;
use spillway_doc::shell::{Dialect, Expr, ExprKind, Parser, Position, Span, TokenKind, evaluate};

use super::command::{
    AggregateQuery, Command, DatabaseOperation, FindAndModifyOptions, FindQuery, IndexSelector,
    Operation,
};
use super::error::ShellError;
use super::split::StatementSource;
use spillway::Pattern;
use spillway_pattern::{OUTLIER_OPTIONS, SUBSET_OPTIONS};

type Result<T> = std::result::Result<T, ShellError>;

/// The methods a collection offers in the shell, for `help` and error messages.
pub const COLLECTION_METHODS: &[&str] = &[
    "insertOne",
    "insertMany",
    "find",
    "findOne",
    "aggregate",
    "updateOne",
    "updateMany",
    "replaceOne",
    "deleteOne",
    "deleteMany",
    "findOneAndUpdate",
    "findOneAndReplace",
    "findOneAndDelete",
    "countDocuments",
    "estimatedDocumentCount",
    "distinct",
    "createIndex",
    "getIndexes",
    "dropIndex",
    "drop",
    "stats",
    "renameCollection",
    "setPattern",
    "removePattern",
    "arrayLength",
    "arrayPage",
    "advise",
];

/// The methods of `db` itself (besides `collection(...)` and `getCollection(...)`).
pub const DATABASE_METHODS: &[&str] = &[
    "getCollectionNames",
    "createCollection",
    "dropDatabase",
    "stats",
    "version",
    "getName",
    "getPatterns",
    "verifyPatterns",
];

/// The methods that may follow `find(...)`.
pub const CURSOR_METHODS: &[&str] = &[
    "sort",
    "skip",
    "limit",
    "projection",
    "explain",
    "toArray",
    "pretty",
    "batchSize",
    "count",
];

/// The methods that may follow `aggregate(...)`.
pub const AGGREGATE_CURSOR_METHODS: &[&str] = &["toArray", "pretty", "explain"];

/// Parses one statement.
pub fn parse_statement(statement: &StatementSource<'_>) -> Result<Command> {
    let origin = Origin {
        start: statement.start,
    };
    let mut parser = Parser::starting_at(statement.text, Dialect::Shell, statement.start);
    let expr = parser
        .parse_expression()
        .map_err(|error| origin.doc_error(error, origin.first()))?;
    let next = parser
        .next_token()
        .map_err(|error| origin.doc_error(error, origin.first()))?;
    if let (ExprKind::Identifier(word), TokenKind::Identifier(topic)) = (&expr.kind, &next.kind)
        && word == "show"
    {
        return parse_show(&origin, topic, next.span, &mut parser);
    }
    if next.kind != TokenKind::End {
        return Err(ShellError::syntax(
            origin.absolute(next.span.start),
            format!(
                "expected ';' or a new line after the statement, found {}",
                next.kind
            ),
        ));
    }
    parse_expression_statement(&origin, &expr)
}

/// Completes positions inside a statement into positions in the whole input: the parser
/// starts at the statement's line and column, so only byte offsets are relative.
#[derive(Debug, Clone, Copy)]
struct Origin {
    start: Position,
}

impl Origin {
    /// The statement's first character, with a relative offset like the parser's.
    fn first(self) -> Position {
        Position {
            offset: 0,
            ..self.start
        }
    }

    fn absolute(self, position: Position) -> Position {
        Position {
            offset: self.start.offset + position.offset,
            ..position
        }
    }

    /// A `spillway_doc` error: syntax errors keep their own position, others get `fallback`.
    fn doc_error(self, error: DocError, fallback: Position) -> ShellError {
        match error {
            DocError::Syntax {
                line,
                column,
                message,
            } => ShellError::syntax(
                Position {
                    offset: self.start.offset,
                    line,
                    column,
                },
                message,
            ),
            other => ShellError::usage(self.absolute(fallback), other.to_string()),
        }
    }

    fn usage(self, at: Position, message: impl Into<String>) -> ShellError {
        ShellError::usage(self.absolute(at), message)
    }
}

fn parse_show(
    origin: &Origin,
    topic: &str,
    topic_span: Span,
    parser: &mut Parser<'_>,
) -> Result<Command> {
    let after = parser
        .next_token()
        .map_err(|error| origin.doc_error(error, origin.first()))?;
    if after.kind != TokenKind::End {
        return Err(ShellError::syntax(
            origin.absolute(after.span.start),
            format!(
                "expected ';' or a new line after 'show {topic}', found {}",
                after.kind
            ),
        ));
    }
    match topic {
        "collections" | "tables" => Ok(Command::ShowCollections),
        "patterns" => Ok(Command::ShowPatterns),
        "dbs" | "databases" => Err(origin.usage(
            topic_span.start,
            "a spillway database is one directory: there is no list of databases \
             (give another directory to open another database)",
        )),
        other => Err(origin.usage(
            topic_span.start,
            format!(
                "unknown 'show {other}': the shell knows 'show collections' and 'show patterns'"
            ),
        )),
    }
}

/// One step of a method chain: `.name`, `[index]` or `(arguments)`.
#[derive(Debug, Clone, Copy)]
enum Link<'e> {
    Property { name: &'e str, span: Span },
    Index { index: &'e Expr },
    Call { arguments: &'e [Expr], span: Span },
}

/// `a.b(c).d` as its root `a` and the links `.b`, `(c)`, `.d`.
fn flatten<'e>(expr: &'e Expr, links: &mut Vec<Link<'e>>) -> &'e Expr {
    match &expr.kind {
        ExprKind::Member { object, property } => {
            let root = flatten(object, links);
            // The property's own span is not kept by the parser: it ends where the member
            // expression ends, unless a parenthesis closes the expression later (on the next
            // line, say); then the member expression's start stands for it.
            let width = property.chars().count();
            let start = if expr.span.end.column > width && expr.span.end.offset >= property.len() {
                Position {
                    offset: expr.span.end.offset - property.len(),
                    line: expr.span.end.line,
                    column: expr.span.end.column - width,
                }
            } else {
                expr.span.start
            };
            links.push(Link::Property {
                name: property,
                span: Span {
                    start,
                    end: expr.span.end,
                },
            });
            root
        }
        ExprKind::Index { object, index } => {
            let root = flatten(object, links);
            links.push(Link::Index { index });
            root
        }
        ExprKind::Call { callee, arguments } => {
            let root = flatten(callee, links);
            links.push(Link::Call {
                arguments,
                span: expr.span,
            });
            root
        }
        _ => expr,
    }
}

const STATEMENT_STARTS: &str =
    "a statement is db.<collection>.<method>(...), show collections, it, help or exit";

fn parse_expression_statement(origin: &Origin, expr: &Expr) -> Result<Command> {
    let mut links = Vec::new();
    let root = flatten(expr, &mut links);
    let ExprKind::Identifier(root_name) = &root.kind else {
        return Err(origin.usage(
            root.span.start,
            format!(
                "expected a statement, found {}: {STATEMENT_STARTS}",
                root.kind.describe()
            ),
        ));
    };
    let is_bare_call = matches!(links.as_slice(), [Link::Call { arguments: [], .. }]);
    match root_name.as_str() {
        "help" | "exit" | "quit" | "it" if links.is_empty() || is_bare_call => {
            return Ok(match root_name.as_str() {
                "help" => Command::Help,
                "it" => Command::More,
                _ => Command::Exit,
            });
        }
        "db" => {}
        other => {
            return Err(origin.usage(
                root.span.start,
                format!("unknown name '{other}': {STATEMENT_STARTS}"),
            ));
        }
    }
    parse_database_chain(origin, root, &links)
}

fn parse_database_chain(origin: &Origin, root: &Expr, links: &[Link<'_>]) -> Result<Command> {
    if let Some(command) = parse_database_method(origin, links) {
        return command;
    }
    let (collection, rest) = chain_collection(origin, root, links)?;
    let (method, method_span, arguments, call_span, cursor_links) =
        collection_method(origin, root, &collection, rest)?;
    let arguments = Arguments {
        origin: *origin,
        method,
        values: arguments,
        call_end: call_span.end,
    };
    let operation = parse_operation(origin, &collection, method, method_span, &arguments)?;
    let operation = match operation {
        Operation::Find(query) => apply_cursor_methods(origin, query, cursor_links)?,
        Operation::Aggregate(query) => {
            Operation::Aggregate(apply_aggregate_cursor_methods(origin, query, cursor_links)?)
        }
        other => {
            if let Some(link) = cursor_links.first() {
                return Err(origin.usage(
                    link_start(link),
                    format!("{method}(...) returns a result, not a cursor: nothing can follow it"),
                ));
            }
            other
        }
    };
    Ok(Command::Collection {
        collection,
        operation,
    })
}

/// `db.<method>(...)` of the database itself; `None` when `links` do not start with one.
fn parse_database_method(origin: &Origin, links: &[Link<'_>]) -> Option<Result<Command>> {
    Some(match links {
        [
            Link::Property {
                name: "getCollectionNames",
                ..
            },
            Link::Call { arguments: [], .. },
        ] => Ok(Command::GetCollectionNames),
        [
            Link::Property {
                name: "getPatterns",
                ..
            },
            Link::Call { arguments: [], .. },
        ] => Ok(Command::GetPatterns),
        [
            Link::Property {
                name: "verifyPatterns",
                ..
            },
            Link::Call { arguments: [], .. },
        ] => Ok(Command::VerifyPatterns),
        [
            Link::Property {
                name: name @ ("createCollection" | "dropDatabase" | "stats" | "version" | "getName"),
                ..
            },
            Link::Call {
                arguments,
                span: call_span,
            },
        ] => {
            let arguments = Arguments {
                origin: *origin,
                method: name,
                values: arguments,
                call_end: call_span.end,
            };
            parse_database_operation(&arguments).map(Command::Database)
        }
        [
            Link::Property {
                name: name @ ("getCollectionNames" | "getPatterns" | "verifyPatterns"),
                span,
            },
            Link::Call { .. },
            ..,
        ] => Err(origin.usage(
            span.start,
            format!("db.{name}() takes no arguments and nothing can follow it"),
        )),
        [
            Link::Property {
                name: name @ ("createCollection" | "dropDatabase" | "stats" | "version" | "getName"),
                span,
            },
            Link::Call { .. },
            ..,
        ] => Err(origin.usage(
            span.start,
            format!("db.{name}(...) returns a result: nothing can follow it"),
        )),
        _ => return None,
    })
}

/// The collection a `db...` chain names (`db.c`, `db.collection("c")`, `db["c"]`) and the rest.
fn chain_collection<'l, 'e>(
    origin: &Origin,
    root: &Expr,
    links: &'l [Link<'e>],
) -> Result<(String, &'l [Link<'e>])> {
    Ok(match links {
        [] => {
            return Err(origin.usage(
                root.span.end,
                "'db' alone is not a statement: write db.<collection>.<method>(...)",
            ));
        }
        [
            Link::Property {
                name: "collection" | "getCollection",
                span,
            },
            Link::Call { arguments, .. },
            rest @ ..,
        ] => {
            let name = match arguments {
                [
                    Expr {
                        kind: ExprKind::String(name),
                        ..
                    },
                ] => name.clone(),
                _ => {
                    return Err(origin.usage(
                        span.start,
                        "db.collection(...) takes one argument: the collection's name as a string",
                    ));
                }
            };
            (name, rest)
        }
        [Link::Index { index }, rest @ ..] => match &index.kind {
            ExprKind::String(name) => (name.clone(), rest),
            other => {
                return Err(origin.usage(
                    index.span.start,
                    format!(
                        "db[...] takes the collection's name as a string, found {}",
                        other.describe()
                    ),
                ));
            }
        },
        _ => {
            // db.a.b.find(): the collection is "a.b", the method the last name before a call.
            let mut names = Vec::new();
            let mut position = 0;
            while let Some(Link::Property { name, .. }) = links.get(position) {
                if matches!(links.get(position + 1), Some(Link::Call { .. })) {
                    break;
                }
                names.push(*name);
                position += 1;
            }
            if names.is_empty() {
                return Err(origin.usage(
                    link_start(&links[0]),
                    "expected a collection after 'db.': db.<collection>.<method>(...)",
                ));
            }
            (names.join("."), &links[position..])
        }
    })
}

/// A method call in a chain: the method's name, the name's span, the arguments, the call's
/// span and the links after the call.
type MethodCall<'l, 'e> = (&'e str, Span, &'e [Expr], Span, &'l [Link<'e>]);

/// The method called on the collection, its arguments and the links after the call.
fn collection_method<'l, 'e>(
    origin: &Origin,
    root: &Expr,
    collection: &str,
    rest: &'l [Link<'e>],
) -> Result<MethodCall<'l, 'e>> {
    Ok(match rest {
        [
            Link::Property { name, span },
            Link::Call {
                arguments,
                span: call_span,
            },
            cursor_links @ ..,
        ] => (*name, *span, *arguments, *call_span, cursor_links),
        [Link::Property { name, span }, ..] => {
            return Err(origin.usage(
                span.start,
                format!("'{name}' needs to be called: db.{collection}.{name}(...)"),
            ));
        }
        [] => {
            return Err(origin.usage(
                root.span.start,
                format!(
                    "db.{collection} alone is not a statement: call one of its methods ({})",
                    COLLECTION_METHODS.join(", ")
                ),
            ));
        }
        [Link::Index { index }, ..] => {
            return Err(origin.usage(
                index.span.start,
                "expected '.<method>(...)' after the collection",
            ));
        }
        [Link::Call { span, .. }, ..] => {
            return Err(origin.usage(span.start, "expected '.<method>(...)' after the collection"));
        }
    })
}

/// Where a link starts, for error messages.
fn link_start(link: &Link<'_>) -> Position {
    match link {
        Link::Property { span, .. } | Link::Call { span, .. } => span.start,
        Link::Index { index } => index.span.start,
    }
}

/// `db.<method>(...)` of the database itself.
fn parse_database_operation(arguments: &Arguments<'_>) -> Result<DatabaseOperation> {
    Ok(match arguments.method {
        "createCollection" => {
            arguments.at_most(2)?;
            let name = match arguments.required(0, "the new collection's name")? {
                Bson::String(name) if !name.is_empty() => name,
                other => {
                    return Err(arguments.wrong_type(
                        0,
                        "the collection's name as a non-empty string",
                        &other,
                    ));
                }
            };
            let options = arguments
                .optional_document(1, "an options document such as {capped: true, size: 4096}")?
                .unwrap_or_default();
            DatabaseOperation::CreateCollection { name, options }
        }
        "dropDatabase" => {
            arguments.at_most(0)?;
            DatabaseOperation::DropDatabase
        }
        "stats" => {
            arguments.at_most(0)?;
            DatabaseOperation::Stats
        }
        "version" => {
            arguments.at_most(0)?;
            DatabaseOperation::Version
        }
        other => {
            debug_assert_eq!(other, "getName", "the caller matched the database methods");
            arguments.at_most(0)?;
            DatabaseOperation::GetName
        }
    })
}

/// How many elements `arrayPage` returns without `{limit: n}` (mongosh's batch size).
pub const DEFAULT_ARRAY_PAGE: u64 = 20;

fn parse_operation(
    origin: &Origin,
    collection: &str,
    method: &str,
    method_span: Span,
    arguments: &Arguments<'_>,
) -> Result<Operation> {
    let operation = match method {
        "insertOne" => parse_insert_one(arguments)?,
        "insertMany" => parse_insert_many(arguments)?,
        "find" => parse_find(arguments)?,
        "aggregate" => parse_aggregate(arguments)?,
        "findOne" => parse_find_one(arguments)?,
        "updateOne" | "updateMany" => parse_update(arguments, method == "updateMany")?,
        "replaceOne" => parse_replace_one(arguments)?,
        "deleteOne" | "deleteMany" => {
            arguments.at_most(2)?;
            Operation::Delete {
                filter: arguments.required_document(0, "a filter")?,
                multi: method == "deleteMany",
                passed: arguments.passing_options(1)?.passed(),
            }
        }
        "findOneAndUpdate" => {
            arguments.at_most(3)?;
            Operation::FindOneAndUpdate {
                filter: arguments.required_document(0, "a filter")?,
                update: arguments.update(1)?,
                options: arguments.find_and_modify_options(2, true)?,
            }
        }
        "findOneAndReplace" => {
            arguments.at_most(3)?;
            Operation::FindOneAndReplace {
                filter: arguments.required_document(0, "a filter")?,
                replacement: arguments.required_document(1, "the replacement document")?,
                options: arguments.find_and_modify_options(2, false)?,
            }
        }
        "findOneAndDelete" => parse_find_one_and_delete(arguments)?,
        "countDocuments" => parse_count_documents(arguments)?,
        "estimatedDocumentCount" => {
            arguments.at_most(1)?;
            arguments.no_options(0)?;
            Operation::EstimatedDocumentCount
        }
        "distinct" => parse_distinct(arguments)?,
        "createIndex" => {
            arguments.at_most(2)?;
            let keys = arguments.required_document(0, "a key pattern such as {year: 1}")?;
            Operation::CreateIndex {
                keys,
                options: arguments.passing_options(1)?.passed(),
            }
        }
        "getIndexes" => {
            arguments.at_most(0)?;
            Operation::GetIndexes
        }
        "dropIndex" => parse_drop_index(arguments)?,
        "drop" => {
            arguments.at_most(0)?;
            Operation::Drop
        }
        "stats" => {
            arguments.at_most(0)?;
            Operation::Stats
        }
        "renameCollection" => parse_rename_collection(arguments)?,
        "setPattern" => {
            arguments.at_most(1)?;
            Operation::SetPattern(arguments.pattern(0, collection)?)
        }
        "removePattern" => {
            arguments.at_most(1)?;
            Operation::RemovePattern {
                field: arguments.field_name(0)?,
            }
        }
        "arrayLength" => {
            arguments.at_most(2)?;
            Operation::ArrayLength {
                id: arguments.required(0, "the document's _id")?,
                field: arguments.field_name(1)?,
            }
        }
        "arrayPage" => parse_array_page(arguments)?,
        "advise" => {
            arguments.at_most(0)?;
            Operation::Advise
        }
        other => {
            return Err(origin.usage(
                method_span.start,
                format!(
                    "unknown collection method '{other}' (the shell knows {})",
                    COLLECTION_METHODS.join(", ")
                ),
            ));
        }
    };
    Ok(operation)
}

/// `insertOne(document)`; an array is taken as `insertMany` would take it.
fn parse_insert_one(arguments: &Arguments<'_>) -> Result<Operation> {
    arguments.at_most(2)?;
    let passed = arguments.passing_options(1)?.passed();
    Ok(match arguments.required(0, "the document to insert")? {
        Bson::Document(document) => Operation::InsertOne { document, passed },
        Bson::Array(elements) => Operation::InsertMany {
            documents: arguments.documents_of(0, elements)?,
            written_as_insert_one: true,
            passed,
        },
        other => return Err(arguments.wrong_type(0, "a document", &other)),
    })
}

/// `insertMany(documents)`, which is always ordered.
fn parse_insert_many(arguments: &Arguments<'_>) -> Result<Operation> {
    arguments.at_most(2)?;
    let mut options = arguments.passing_options(1)?;
    if !options.bool("ordered")?.unwrap_or(true) {
        return Err(options.refuse(
            "ordered",
            "'ordered: false' is not supported: insertMany is ordered (it stops at the first failure and keeps the documents inserted before it)",
        ));
    }
    Ok(match arguments.required(0, "an array of documents")? {
        Bson::Array(elements) => Operation::InsertMany {
            documents: arguments.documents_of(0, elements)?,
            written_as_insert_one: false,
            passed: options.passed(),
        },
        other => return Err(arguments.wrong_type(0, "an array of documents", &other)),
    })
}

/// `find(filter, projection, options)`.
fn parse_find(arguments: &Arguments<'_>) -> Result<Operation> {
    arguments.at_most(3)?;
    let mut query = FindQuery {
        filter: arguments.filter(0)?,
        projection: arguments.optional_document(1, "a projection")?,
        ..FindQuery::default()
    };
    let mut options = arguments.passing_options(2)?;
    query.sort = options.document("sort")?;
    query.skip = options.count("skip")?.unwrap_or(0);
    query.limit = options.integer("limit")?.unwrap_or(0);
    if let Some(projection) = options.document("projection")? {
        query.projection = Some(projection);
    }
    // The shell pages the cursor itself (`it`), with its own batch size.
    options.integer("batchSize")?;
    query.passed = options.passed();
    Ok(Operation::Find(query))
}

/// `aggregate(pipeline, options)`.
fn parse_aggregate(arguments: &Arguments<'_>) -> Result<Operation> {
    arguments.at_most(2)?;
    let pipeline = match arguments.required(0, "a pipeline: an array of stages")? {
        Bson::Array(stages) => arguments.documents_of(0, stages)?,
        other => {
            return Err(arguments.wrong_type(0, "a pipeline: an array of stages", &other));
        }
    };
    let mut query = AggregateQuery {
        pipeline,
        ..AggregateQuery::default()
    };
    let mut options = arguments.passing_options(1)?;
    query.let_vars = options.document("let")?;
    query.explain = options.bool("explain")?.unwrap_or(false);
    // The shell pages the cursor itself (`it`), with its own batch size.
    options.integer("batchSize")?;
    query.passed = options.passed();
    Ok(Operation::Aggregate(query))
}

/// `findOne(filter, projection, options)`.
fn parse_find_one(arguments: &Arguments<'_>) -> Result<Operation> {
    arguments.at_most(3)?;
    let filter = arguments.filter(0)?;
    let mut projection = arguments.optional_document(1, "a projection")?;
    let mut options = arguments.passing_options(2)?;
    let sort = options.document("sort")?;
    let skip = options.count("skip")?.unwrap_or(0);
    if let Some(given) = options.document("projection")? {
        projection = Some(given);
    }
    Ok(Operation::FindOne {
        filter,
        projection,
        sort,
        skip,
        passed: options.passed(),
    })
}

/// `updateOne` and `updateMany(filter, update, options)`.
fn parse_update(arguments: &Arguments<'_>, multi: bool) -> Result<Operation> {
    arguments.at_most(3)?;
    let filter = arguments.required_document(0, "a filter")?;
    let update = arguments.update(1)?;
    let mut options = arguments.passing_options(2)?;
    Ok(Operation::Update {
        filter,
        update,
        multi,
        upsert: options.bool("upsert")?.unwrap_or(false),
        array_filters: options.documents("arrayFilters")?.unwrap_or_default(),
        passed: options.passed(),
    })
}

/// `replaceOne(filter, replacement, options)`.
fn parse_replace_one(arguments: &Arguments<'_>) -> Result<Operation> {
    arguments.at_most(3)?;
    let filter = arguments.required_document(0, "a filter")?;
    let replacement = arguments.required_document(1, "the replacement document")?;
    let mut options = arguments.passing_options(2)?;
    Ok(Operation::Replace {
        filter,
        replacement,
        upsert: options.bool("upsert")?.unwrap_or(false),
        passed: options.passed(),
    })
}

/// `findOneAndDelete(filter, options)`.
fn parse_find_one_and_delete(arguments: &Arguments<'_>) -> Result<Operation> {
    arguments.at_most(2)?;
    let filter = arguments.required_document(0, "a filter")?;
    let mut options = arguments.passing_options(1)?;
    Ok(Operation::FindOneAndDelete {
        filter,
        sort: options.document("sort")?,
        projection: options.document("projection")?,
        passed: options.passed(),
    })
}

/// `countDocuments(filter, options)`.
fn parse_count_documents(arguments: &Arguments<'_>) -> Result<Operation> {
    arguments.at_most(2)?;
    let filter = arguments.filter(0)?;
    let mut options = arguments.passing_options(1)?;
    Ok(Operation::CountDocuments {
        filter,
        skip: options.count("skip")?.unwrap_or(0),
        limit: options.count("limit")?.unwrap_or(0),
        passed: options.passed(),
    })
}

/// `distinct(field, filter, options)`.
fn parse_distinct(arguments: &Arguments<'_>) -> Result<Operation> {
    arguments.at_most(3)?;
    let field = match arguments.required(0, "a field name")? {
        Bson::String(field) => field,
        other => return Err(arguments.wrong_type(0, "a field name as a string", &other)),
    };
    Ok(Operation::Distinct {
        field,
        filter: arguments.filter(1)?,
        passed: arguments.passing_options(2)?.passed(),
    })
}

/// `dropIndex(name or key pattern)`.
fn parse_drop_index(arguments: &Arguments<'_>) -> Result<Operation> {
    arguments.at_most(1)?;
    Ok(
        match arguments.required(0, "an index name or key pattern")? {
            Bson::String(name) => Operation::DropIndex(IndexSelector::Name(name)),
            Bson::Document(keys) => Operation::DropIndex(IndexSelector::Keys(keys)),
            other => {
                return Err(arguments.wrong_type(0, "an index name or key pattern", &other));
            }
        },
    )
}

/// `renameCollection(name, dropTarget)`.
fn parse_rename_collection(arguments: &Arguments<'_>) -> Result<Operation> {
    arguments.at_most(2)?;
    let to = match arguments.required(0, "the new name")? {
        Bson::String(to) if !to.is_empty() => to,
        other => {
            return Err(arguments.wrong_type(0, "the new name as a non-empty string", &other));
        }
    };
    let drop_target = match arguments.value(1)? {
        None | Some(Bson::Null | Bson::Undefined) => false,
        Some(Bson::Boolean(drop_target)) => drop_target,
        Some(other) => {
            return Err(arguments.wrong_type(1, "dropTarget: true or false", &other));
        }
    };
    Ok(Operation::RenameCollection { to, drop_target })
}

/// `arrayPage(_id, field, {skip, limit})`.
fn parse_array_page(arguments: &Arguments<'_>) -> Result<Operation> {
    arguments.at_most(3)?;
    let id = arguments.required(0, "the document's _id")?;
    let field = arguments.field_name(1)?;
    let mut skip = 0;
    let mut limit = DEFAULT_ARRAY_PAGE;
    if let Some(mut options) = arguments.options(2, &["skip", "limit"])? {
        skip = options.count("skip")?.unwrap_or(0);
        limit = options.count("limit")?.unwrap_or(DEFAULT_ARRAY_PAGE);
    }
    let to_usize = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    Ok(Operation::ArrayPage {
        id,
        field,
        skip: to_usize(skip),
        limit: to_usize(limit),
    })
}

/// The `.method(arguments)` calls chained after a cursor-returning method, in order.
fn cursor_calls<'a>(
    origin: &Origin,
    links: &'a [Link<'a>],
    after: &str,
) -> Result<Vec<(&'a str, Span, Arguments<'a>)>> {
    let mut calls = Vec::new();
    let mut rest = links;
    while !rest.is_empty() {
        let (method, method_span, values, call_span) = match rest {
            [
                Link::Property { name, span },
                Link::Call {
                    arguments,
                    span: call_span,
                },
                ..,
            ] => (*name, *span, *arguments, *call_span),
            [Link::Property { name, span }, ..] => {
                return Err(origin.usage(
                    span.start,
                    format!("'{name}' needs to be called: .{name}(...)"),
                ));
            }
            [Link::Index { index }, ..] => {
                return Err(origin.usage(
                    index.span.start,
                    format!("expected a cursor method such as .toArray() after {after}(...)"),
                ));
            }
            [Link::Call { span, .. }, ..] => {
                return Err(origin.usage(
                    span.start,
                    format!("expected a cursor method such as .toArray() after {after}(...)"),
                ));
            }
            [] => unreachable!("the loop stops on an empty chain"),
        };
        rest = &rest[2..];
        if calls.iter().any(|(earlier, _, _)| *earlier == "explain") {
            return Err(origin.usage(
                method_span.start,
                format!("explain() must come last: call .{method}(...) before it"),
            ));
        }
        let arguments = Arguments {
            origin: *origin,
            method,
            values,
            call_end: call_span.end,
        };
        calls.push((method, method_span, arguments));
    }
    Ok(calls)
}

/// `explain(verbosity)`'s optional argument, checked.
fn explain_verbosity(arguments: &Arguments<'_>) -> Result<()> {
    arguments.at_most(1)?;
    if let Some(verbosity) = arguments.value(0)? {
        let known = ["queryPlanner", "executionStats", "allPlansExecution"];
        let valid = matches!(&verbosity, Bson::String(text) if known.contains(&text.as_str()))
            || matches!(verbosity, Bson::Boolean(_));
        if !valid {
            return Err(arguments.wrong_type(
                0,
                "a verbosity ('queryPlanner', 'executionStats' or 'allPlansExecution')",
                &verbosity,
            ));
        }
    }
    Ok(())
}

/// The cursor methods after `aggregate(...)`: `toArray()`, `pretty()`, `explain()`.
fn apply_aggregate_cursor_methods(
    origin: &Origin,
    mut query: AggregateQuery,
    links: &[Link<'_>],
) -> Result<AggregateQuery> {
    for (method, method_span, arguments) in cursor_calls(origin, links, "aggregate")? {
        match method {
            "explain" => {
                explain_verbosity(&arguments)?;
                query.explain = true;
            }
            "toArray" | "pretty" => arguments.at_most(0)?,
            other => {
                return Err(origin.usage(
                    method_span.start,
                    format!(
                        "unknown cursor method '{other}' (after aggregate(...) the shell knows {})",
                        AGGREGATE_CURSOR_METHODS.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(query)
}

/// The cursor methods after `find(...)`: a find, or a count when the chain ends with
/// `.count()`.
fn apply_cursor_methods(
    origin: &Origin,
    mut query: FindQuery,
    links: &[Link<'_>],
) -> Result<Operation> {
    let calls = cursor_calls(origin, links, "find")?;
    let last = calls.len().saturating_sub(1);
    for (position, (method, method_span, arguments)) in calls.into_iter().enumerate() {
        match method {
            // mongosh's `cursor.count(applySkipLimit)`: the documents the filter matches,
            // without `skip` and `limit` unless asked; it answers a number, so it ends the chain.
            "count" => {
                if position != last {
                    return Err(origin.usage(
                        method_span.start,
                        "count() answers a number: no cursor method can follow it".to_string(),
                    ));
                }
                arguments.at_most(1)?;
                let apply_skip_limit = arguments.optional_bool(0)?.unwrap_or(false);
                let (skip, limit) = if apply_skip_limit {
                    (query.skip, query.limit.unsigned_abs())
                } else {
                    (0, 0)
                };
                return Ok(Operation::CountDocuments {
                    filter: query.filter,
                    skip,
                    limit,
                    passed: query.passed,
                });
            }
            "sort" => {
                arguments.at_most(1)?;
                query.sort = Some(arguments.required_document(0, "a sort such as {year: -1}")?);
            }
            "projection" => {
                arguments.at_most(1)?;
                query.projection = Some(arguments.required_document(0, "a projection")?);
            }
            "skip" => {
                arguments.at_most(1)?;
                query.skip = arguments.count(0)?;
            }
            "limit" => {
                arguments.at_most(1)?;
                query.limit = arguments.integer(0)?;
            }
            "batchSize" => {
                arguments.at_most(1)?;
                arguments.count(0)?;
            }
            "explain" => {
                explain_verbosity(&arguments)?;
                query.explain = true;
            }
            "toArray" | "pretty" => arguments.at_most(0)?,
            other => {
                return Err(origin.usage(
                    method_span.start,
                    format!(
                        "unknown cursor method '{other}' (after find(...) the shell knows {})",
                        CURSOR_METHODS.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(Operation::Find(query))
}

/// The arguments of one call, evaluated on demand, with errors that name the method and
/// point at the argument.
struct Arguments<'e> {
    origin: Origin,
    method: &'e str,
    values: &'e [Expr],
    /// Just past the closing parenthesis: where a missing argument is reported.
    call_end: Position,
}

impl Arguments<'_> {
    fn at(&self, index: usize) -> Position {
        self.values.get(index).map_or(
            Position {
                column: self.call_end.column.saturating_sub(1).max(1),
                offset: self.call_end.offset.saturating_sub(1),
                ..self.call_end
            },
            |value| value.span.start,
        )
    }

    fn usage(&self, index: usize, message: impl Into<String>) -> ShellError {
        self.origin.usage(self.at(index), message)
    }

    fn at_most(&self, count: usize) -> Result<()> {
        if self.values.len() <= count {
            return Ok(());
        }
        let takes = match count {
            0 => "no arguments".to_owned(),
            1 => "at most 1 argument".to_owned(),
            n => format!("at most {n} arguments"),
        };
        Err(self.usage(
            count,
            format!("{} takes {takes}, found {}", self.method, self.values.len()),
        ))
    }

    fn value(&self, index: usize) -> Result<Option<Bson>> {
        let Some(expr) = self.values.get(index) else {
            return Ok(None);
        };
        evaluate(expr)
            .map(Some)
            .map_err(|error| self.origin.doc_error(error, innermost_failure(expr)))
    }

    fn required(&self, index: usize, what: &str) -> Result<Bson> {
        self.value(index)?.ok_or_else(|| {
            self.usage(
                index,
                format!("{} needs {what} (argument {})", self.method, index + 1),
            )
        })
    }

    fn wrong_type(&self, index: usize, expected: &str, found: &Bson) -> ShellError {
        self.usage(
            index,
            format!(
                "{}: argument {} must be {expected}, found {}",
                self.method,
                index + 1,
                describe(found)
            ),
        )
    }

    fn required_document(&self, index: usize, what: &str) -> Result<Document> {
        match self.required(index, what)? {
            Bson::Document(document) => Ok(document),
            other => Err(self.wrong_type(index, what, &other)),
        }
    }

    fn optional_document(&self, index: usize, what: &str) -> Result<Option<Document>> {
        match self.value(index)? {
            None | Some(Bson::Null | Bson::Undefined) => Ok(None),
            Some(Bson::Document(document)) => Ok(Some(document)),
            Some(other) => Err(self.wrong_type(index, what, &other)),
        }
    }

    fn optional_bool(&self, index: usize) -> Result<Option<bool>> {
        match self.value(index)? {
            None | Some(Bson::Null | Bson::Undefined) => Ok(None),
            Some(Bson::Boolean(value)) => Ok(Some(value)),
            Some(other) => Err(self.wrong_type(index, "true or false", &other)),
        }
    }

    /// An optional filter: missing means every document.
    fn filter(&self, index: usize) -> Result<Document> {
        Ok(self
            .optional_document(index, "a filter document")?
            .unwrap_or_default())
    }

    fn update(&self, index: usize) -> Result<Document> {
        match self.required(index, "an update such as {$set: {...}}")? {
            // mongosh (its driver) refuses an update without operators rather than replace
            // or empty the document: replacing is replaceOne's job.
            Bson::Document(document)
                if !document.keys().next().is_some_and(|key| key.starts_with('$')) =>
            {
                Err(self.usage(
                    index,
                    format!(
                        "{}: Update document requires atomic operators (such as {{$set: {{...}}}}; replaceOne replaces a whole document)",
                        self.method
                    ),
                ))
            }
            Bson::Document(document) => Ok(document),
            Bson::Array(_) => Err(self.usage(
                index,
                format!(
                    "{}: update pipelines ([...]) are not supported; use update operators such as {{$set: {{...}}}}",
                    self.method
                ),
            )),
            other => Err(self.wrong_type(index, "an update such as {$set: {...}}", &other)),
        }
    }

    /// The elements of an array argument, each of which must be a document.
    fn documents_of(&self, index: usize, elements: Vec<Bson>) -> Result<Vec<Document>> {
        elements
            .into_iter()
            .enumerate()
            .map(|(position, element)| match element {
                Bson::Document(document) => Ok(document),
                other => Err(self.usage(
                    index,
                    format!(
                        "{}: element {position} of the array must be a document, found {}",
                        self.method,
                        describe(&other)
                    ),
                )),
            })
            .collect()
    }

    fn integer(&self, index: usize) -> Result<i64> {
        let value = self.required(index, "a number")?;
        as_integer(&value).ok_or_else(|| self.wrong_type(index, "an integer", &value))
    }

    fn count(&self, index: usize) -> Result<u64> {
        let value = self.required(index, "a number")?;
        as_integer(&value)
            .and_then(|number| u64::try_from(number).ok())
            .ok_or_else(|| self.wrong_type(index, "a non-negative integer", &value))
    }

    fn no_options(&self, index: usize) -> Result<()> {
        match self.value(index)? {
            None => Ok(()),
            Some(Bson::Document(options)) if options.is_empty() => Ok(()),
            Some(_) => Err(self.usage(
                index,
                format!("{} takes no options in this shell", self.method),
            )),
        }
    }

    /// The options document at `index` (empty when there is none), of a method whose options
    /// go to the command layer: what the shell does not read from it is passed on
    /// ([`Options::passed`]) for the command layer to apply or refuse.
    fn passing_options(&self, index: usize) -> Result<Options<'_>> {
        let document = match self.value(index)? {
            None | Some(Bson::Null | Bson::Undefined) => Document::new(),
            Some(Bson::Document(document)) => document,
            Some(other) => return Err(self.wrong_type(index, "an options document", &other)),
        };
        Ok(Options {
            arguments: self,
            index,
            document,
        })
    }

    /// The options document at `index` of a method the shell runs alone, which knows only
    /// the `supported` options.
    fn options(&self, index: usize, supported: &[&'static str]) -> Result<Option<Options<'_>>> {
        let document = match self.value(index)? {
            None | Some(Bson::Null | Bson::Undefined) => return Ok(None),
            Some(Bson::Document(document)) => document,
            Some(other) => return Err(self.wrong_type(index, "an options document", &other)),
        };
        if let Some(unknown) = document
            .keys()
            .find(|key| !supported.contains(&key.as_str()))
        {
            return Err(self.usage(
                index,
                format!(
                    "{}: unknown option '{unknown}' (supported: {})",
                    self.method,
                    supported.join(", ")
                ),
            ));
        }
        Ok(Some(Options {
            arguments: self,
            index,
            document,
        }))
    }

    /// A field name given as a string.
    fn field_name(&self, index: usize) -> Result<String> {
        match self.required(index, "a field name")? {
            Bson::String(field) if !field.is_empty() => Ok(field),
            other => Err(self.wrong_type(index, "a field name as a non-empty string", &other)),
        }
    }

    /// `setPattern`'s argument: `{outlier: field, ...}` or `{subset: field, ...}`, every
    /// option known to the kind, each of the right type.
    fn pattern(&self, index: usize, collection: &str) -> Result<Pattern> {
        const USAGE: &str = "{outlier: '<field>', threshold, overflowCollection, linkField, \
             flagField, overflowField, bucketCapacity | unboundedBuckets} or {subset: '<field>', \
             keep, sortBy, archiveCollection, linkField, identity}";
        let given = match self.required(index, &format!("a policy such as {USAGE}"))? {
            Bson::Document(given) => given,
            other => return Err(self.wrong_type(index, &format!("a policy {USAGE}"), &other)),
        };
        let is_outlier = given.contains_key("outlier");
        let is_subset = given.contains_key("subset");
        let supported = match (is_outlier, is_subset) {
            (true, false) => OUTLIER_OPTIONS,
            (false, true) => SUBSET_OPTIONS,
            (true, true) => {
                return Err(self.usage(
                    index,
                    format!(
                        "{}: give either 'outlier' or 'subset', not both: {USAGE}",
                        self.method
                    ),
                ));
            }
            (false, false) => {
                return Err(self.usage(
                    index,
                    format!(
                        "{}: the policy needs 'outlier: <field>' or 'subset: <field>': {USAGE}",
                        self.method
                    ),
                ));
            }
        };
        let mut options = self
            .options(index, supported)?
            .expect("the argument is a document");
        // Every option is checked here for the shell's messages (which name the option and
        // point at it); spillway-pattern builds the policy from the same document.
        if is_outlier {
            options.field("outlier")?;
            options.count("threshold")?;
            options.string("overflowCollection")?;
            options.string("linkField")?;
            options.string("flagField")?;
            options.string("overflowField")?;
            let capacity = options.count("bucketCapacity")?;
            let unbounded = options.bool("unboundedBuckets")?.unwrap_or(false);
            if capacity.is_some() && unbounded {
                return Err(options.refuse(
                    "unboundedBuckets",
                    "give either bucketCapacity or unboundedBuckets: true, not both",
                ));
            }
        } else {
            options.field("subset")?;
            options.count("keep")?;
            options.document("sortBy")?;
            options.string("archiveCollection")?;
            options.string("linkField")?;
            options.string("identity")?;
        }
        Pattern::from_options(collection, &given, &[])
            .map_err(|error| self.usage(index, format!("{}: {error}", self.method)))
    }

    fn find_and_modify_options(&self, index: usize, update: bool) -> Result<FindAndModifyOptions> {
        let mut result = FindAndModifyOptions::default();
        let mut options = self.passing_options(index)?;
        result.sort = options.document("sort")?;
        result.projection = options.document("projection")?;
        result.upsert = options.bool("upsert")?.unwrap_or(false);
        result.return_after = options.bool("returnNewDocument")?.unwrap_or(false);
        match options.string("returnDocument")?.as_deref() {
            None => {}
            Some("after") => result.return_after = true,
            Some("before") => result.return_after = false,
            Some(other) => {
                return Err(options.refuse(
                    "returnDocument",
                    &format!("returnDocument must be 'before' or 'after', found '{other}'"),
                ));
            }
        }
        if update {
            result.array_filters = options.documents("arrayFilters")?.unwrap_or_default();
        }
        result.passed = options.passed();
        Ok(result)
    }
}

/// An options document being read, option by option.
struct Options<'a> {
    arguments: &'a Arguments<'a>,
    index: usize,
    document: Document,
}

impl Options<'_> {
    /// The options not read yet, as given: for the command, where the command layer applies
    /// or refuses each.
    fn passed(self) -> Document {
        self.document
    }

    fn refuse(&self, option: &str, message: &str) -> ShellError {
        self.arguments.usage(
            self.index,
            format!("{}: option '{option}': {message}", self.arguments.method),
        )
    }

    fn wrong_type(&self, option: &str, expected: &str, found: &Bson) -> ShellError {
        self.refuse(
            option,
            &format!("expected {expected}, found {}", describe(found)),
        )
    }

    fn bool(&mut self, option: &str) -> Result<Option<bool>> {
        match self.document.remove(option) {
            None => Ok(None),
            Some(Bson::Boolean(value)) => Ok(Some(value)),
            Some(other) => Err(self.wrong_type(option, "true or false", &other)),
        }
    }

    fn document(&mut self, option: &str) -> Result<Option<Document>> {
        match self.document.remove(option) {
            None => Ok(None),
            Some(Bson::Document(value)) => Ok(Some(value)),
            Some(other) => Err(self.wrong_type(option, "a document", &other)),
        }
    }

    fn documents(&mut self, option: &str) -> Result<Option<Vec<Document>>> {
        match self.document.remove(option) {
            None => Ok(None),
            Some(Bson::Array(elements)) => elements
                .into_iter()
                .map(|element| match element {
                    Bson::Document(document) => Ok(document),
                    other => Err(self.wrong_type(option, "an array of documents", &other)),
                })
                .collect::<Result<Vec<_>>>()
                .map(Some),
            Some(other) => Err(self.wrong_type(option, "an array of documents", &other)),
        }
    }

    fn string(&mut self, option: &str) -> Result<Option<String>> {
        match self.document.remove(option) {
            None => Ok(None),
            Some(Bson::String(value)) => Ok(Some(value)),
            Some(other) => Err(self.wrong_type(option, "a string", &other)),
        }
    }

    /// A required field name.
    fn field(&mut self, option: &str) -> Result<String> {
        match self.document.remove(option) {
            Some(Bson::String(field)) if !field.is_empty() => Ok(field),
            Some(other) => {
                Err(self.wrong_type(option, "a field name as a non-empty string", &other))
            }
            None => Err(self.refuse(option, "missing")),
        }
    }

    fn integer(&mut self, option: &str) -> Result<Option<i64>> {
        match self.document.remove(option) {
            None => Ok(None),
            Some(value) => as_integer(&value)
                .map(Some)
                .ok_or_else(|| self.wrong_type(option, "an integer", &value)),
        }
    }

    fn count(&mut self, option: &str) -> Result<Option<u64>> {
        match self.document.remove(option) {
            None => Ok(None),
            Some(value) => as_integer(&value)
                .and_then(|number| u64::try_from(number).ok())
                .map(Some)
                .ok_or_else(|| self.wrong_type(option, "a non-negative integer", &value)),
        }
    }
}

/// Where the value that makes `expr` fail to evaluate starts: the innermost object, array
/// element or constructor call that fails on its own. Only runs on the error path.
fn innermost_failure(expr: &Expr) -> Position {
    let children: Vec<&Expr> = match &expr.kind {
        ExprKind::Object(fields) => fields.iter().map(|field| &field.value).collect(),
        ExprKind::Array(elements) => elements.iter().collect(),
        ExprKind::Call { arguments, .. } | ExprKind::New { arguments, .. } => {
            arguments.iter().collect()
        }
        _ => Vec::new(),
    };
    children
        .into_iter()
        .find(|child| evaluate(child).is_err())
        .map_or(expr.span.start, innermost_failure)
}

/// An integral number of any BSON numeric type.
fn as_integer(value: &Bson) -> Option<i64> {
    match value {
        Bson::Int32(number) => Some(i64::from(*number)),
        Bson::Int64(number) => Some(*number),
        Bson::Double(number) if number.fract() == 0.0 && number.abs() < 9.0e18 => {
            Some(*number as i64)
        }
        _ => None,
    }
}

/// How messages name a value's type.
fn describe(value: &Bson) -> String {
    match value {
        Bson::Document(_) => "a document".to_owned(),
        Bson::Array(_) => "an array".to_owned(),
        Bson::String(text) => format!("the string {text:?}"),
        Bson::Boolean(value) => format!("{value}"),
        Bson::Null => "null".to_owned(),
        Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) | Bson::Decimal128(_) => {
            format!("the number {value}")
        }
        other => format!("a value of type {:?}", other.element_type()),
    }
}
