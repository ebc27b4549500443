//! Server-side JavaScript for `$where`, on the QuickJS engine (`rquickjs`).
//!
//! A `$where` clause holds JavaScript source: a function (`function() { return this.x < 3 }`)
//! or an expression (`this.x < 3`, run as the body of such a function), called once per
//! document with the document as `this`; a truthy result is a match. As in MongoDB 4.4+,
//! code with scope is refused, and the global `sleep(ms)` is there (pymongo's tests use it
//! to make an operation last).
//!
//! - **Engines** are per thread: each thread that evaluates a `$where` keeps one QuickJS
//!   runtime (64 MiB of memory, 1 MiB of stack) and the functions it compiled, by source, so
//!   a filter compiles once per thread. Nothing is shared between threads.
//! - **Time**: [`with_deadline`] bounds every `$where` evaluated inside it (the command layer
//!   passes `maxTimeMS`). Past the deadline a running script is interrupted, `sleep` returns
//!   early, and the evaluation fails with MongoDB's `MaxTimeMSExpired` (50). Without a
//!   deadline, one call is still bounded to a minute, so that no script holds a thread forever.
//! - **Documents** reach JavaScript as plain values: numbers (int32, int64 and doubles),
//!   strings, booleans, `null`, arrays, objects and `Date`s; other BSON types as their string
//!   form (an ObjectId as its hex string).
//! - **Errors** in the script (a syntax error, a thrown exception, memory exhausted) fail the
//!   operation with `JSInterpreterFailure` (139) and the engine's message.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::time::{Duration, Instant};

use bson::{Bson, RawBsonRef, RawDocument};
use rquickjs::function::This;
use rquickjs::{Array, Context, Ctx, Function, Object, Persistent, Runtime, Value};

use crate::error::{DocError, Result};

/// MongoDB's `JSInterpreterFailure`.
const JS_INTERPRETER_FAILURE: i32 = 139;
/// MongoDB's `MaxTimeMSExpired`.
const MAX_TIME_MS_EXPIRED: i32 = 50;
/// MongoDB's code for `$where` with a scope (removed in 4.4).
const WHERE_SCOPE_REMOVED: i32 = 4649200;
/// The memory one thread's engine may use.
const MEMORY_LIMIT: usize = 64 * 1024 * 1024;
/// The stack one thread's engine may use.
const STACK_LIMIT: usize = 1024 * 1024;
/// How long one call may run when the operation has no deadline of its own.
const UNBOUNDED_CALL_LIMIT: Duration = Duration::from_secs(60);
/// How many compiled functions a thread keeps before it starts over.
const CACHED_FUNCTIONS: usize = 256;

/// A `$where` clause: JavaScript source, called with each document as `this`.
#[derive(Debug, Clone, PartialEq)]
pub struct WhereFunction {
    source: String,
}

impl WhereFunction {
    /// Reads `$where`'s operand: a string or BSON JavaScript code; code with scope is
    /// refused (4649200), as MongoDB 4.4+ does, and any other type is BadValue (2).
    pub fn parse(value: &Bson) -> Result<WhereFunction> {
        match value {
            Bson::String(source) | Bson::JavaScriptCode(source) => Ok(WhereFunction {
                source: source.clone(),
            }),
            Bson::JavaScriptCodeWithScope(_) => Err(DocError::Expression {
                code: WHERE_SCOPE_REMOVED,
                message: "$where no longer supports javascript scope".into(),
            }),
            _ => Err(DocError::filter(
                "$where",
                "$where got bad type: it takes a string or JavaScript code",
            )),
        }
    }

    /// The JavaScript source as given.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether the function returns a truthy value with `document` as `this`.
    pub fn matches(&self, document: &RawDocument) -> Result<bool> {
        ENGINE.with(|engine| {
            let mut engine = engine.borrow_mut();
            if engine.is_none() {
                *engine = Some(Engine::new()?);
            }
            engine
                .as_mut()
                .expect("just made")
                .call(&self.source, document)
        })
    }
}

thread_local! {
    /// This thread's engine, made by the first `$where` it evaluates.
    static ENGINE: RefCell<Option<Engine>> = const { RefCell::new(None) };
    /// The deadline of the operation this thread runs, if it has one.
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Runs `body` with every `$where` it evaluates on this thread bounded by `deadline`.
pub fn with_deadline<R>(deadline: Option<Instant>, body: impl FnOnce() -> R) -> R {
    let outer = DEADLINE.with(|current| current.replace(deadline));
    let result = body();
    DEADLINE.with(|current| current.set(outer));
    result
}

fn expired() -> bool {
    DEADLINE.with(|deadline| deadline.get().is_some_and(|at| Instant::now() >= at))
}

fn time_limit_exceeded() -> DocError {
    DocError::Expression {
        code: MAX_TIME_MS_EXPIRED,
        message: "operation exceeded time limit".into(),
    }
}

fn script_error(message: impl std::fmt::Display) -> DocError {
    DocError::Expression {
        code: JS_INTERPRETER_FAILURE,
        message: format!("$where: {message}"),
    }
}

/// One thread's QuickJS runtime and the functions compiled in it. Fields drop in order: the
/// functions before the context and runtime that own them.
struct Engine {
    functions: HashMap<String, Persistent<Function<'static>>>,
    context: Context,
    /// Owns the context's memory; read by nothing, dropped last.
    _runtime: Runtime,
}

impl Engine {
    fn new() -> Result<Engine> {
        let runtime = Runtime::new().map_err(script_error)?;
        runtime.set_memory_limit(MEMORY_LIMIT);
        runtime.set_max_stack_size(STACK_LIMIT);
        runtime.set_interrupt_handler(Some(Box::new(expired)));
        let context = Context::full(&runtime).map_err(script_error)?;
        context
            .with(|ctx| -> rquickjs::Result<()> {
                let sleep = Function::new(ctx.clone(), |milliseconds: f64| {
                    sleep_until_deadline(Duration::from_secs_f64(milliseconds.max(0.0) / 1000.0));
                })?;
                ctx.globals().set("sleep", sleep)
            })
            .map_err(script_error)?;
        Ok(Engine {
            functions: HashMap::new(),
            context,
            _runtime: runtime,
        })
    }

    fn call(&mut self, source: &str, document: &RawDocument) -> Result<bool> {
        if DEADLINE.with(Cell::get).is_none() {
            // Without an operation deadline a call still ends: a script that never returns
            // must not hold a server's thread forever.
            return with_deadline(Some(Instant::now() + UNBOUNDED_CALL_LIMIT), || {
                self.call(source, document)
            });
        }
        if expired() {
            return Err(time_limit_exceeded());
        }
        if self.functions.len() >= CACHED_FUNCTIONS && !self.functions.contains_key(source) {
            self.functions.clear();
        }
        let functions = &mut self.functions;
        let outcome = self
            .context
            .with(|ctx| -> std::result::Result<bool, String> {
                let function = if let Some(saved) = functions.get(source) {
                    saved.clone().restore(&ctx).map_err(|e| e.to_string())?
                } else {
                    let function = compile(&ctx, source)?;
                    functions.insert(source.to_string(), Persistent::save(&ctx, function.clone()));
                    function
                };
                let this = document_to_js(&ctx, document).map_err(|error| caught(&ctx, &error))?;
                let result: Value = function
                    .call((This(this),))
                    .map_err(|error| caught(&ctx, &error))?;
                Ok(truthy(&result))
            });
        // A script interrupted at the deadline fails as the time limit, not as a script error.
        if expired() {
            return Err(time_limit_exceeded());
        }
        outcome.map_err(script_error)
    }
}

/// The function `source` defines: a function expression as it is, anything else as the
/// body `return (<source>);`.
fn compile<'js>(ctx: &Ctx<'js>, source: &str) -> std::result::Result<Function<'js>, String> {
    let trimmed = source.trim();
    let wrapped = if trimmed.starts_with("function") {
        format!("({trimmed})")
    } else {
        format!("(function() {{ return ({trimmed}); }})")
    };
    let value: Value = ctx.eval(wrapped).map_err(|error| caught(ctx, &error))?;
    value
        .into_function()
        .ok_or_else(|| format!("'{source}' is not a function"))
}

/// The message of a failed call: the JavaScript exception's, when one was thrown.
fn caught(ctx: &Ctx<'_>, error: &rquickjs::Error) -> String {
    if error.is_exception() {
        let exception = ctx.catch();
        if let Some(exception) = exception.as_exception() {
            let message = exception
                .message()
                .unwrap_or_else(|| "an exception was thrown".into());
            return match exception.as_object().get::<_, String>("name") {
                Ok(name) => format!("{name}: {message}"),
                Err(_) => message,
            };
        }
        if let Ok(text) = exception.get::<String>() {
            return text;
        }
    }
    error.to_string()
}

/// JavaScript's truthiness of a result.
fn truthy(value: &Value<'_>) -> bool {
    if let Some(flag) = value.as_bool() {
        return flag;
    }
    if let Some(number) = value.as_number() {
        return number != 0.0 && !number.is_nan();
    }
    if let Some(text) = value.as_string() {
        return text.to_string().is_ok_and(|text| !text.is_empty());
    }
    !(value.is_null() || value.is_undefined())
}

/// Sleeps `duration`, or until the deadline if that comes first.
fn sleep_until_deadline(duration: Duration) {
    let until = Instant::now() + duration;
    let until = DEADLINE
        .with(Cell::get)
        .map_or(until, |deadline| deadline.min(until));
    let now = Instant::now();
    if until > now {
        std::thread::sleep(until - now);
    }
}

fn document_to_js<'js>(ctx: &Ctx<'js>, document: &RawDocument) -> rquickjs::Result<Object<'js>> {
    let object = Object::new(ctx.clone())?;
    for element in document {
        let (name, value) = element.map_err(|error| {
            rquickjs::Exception::throw_message(ctx, &format!("malformed BSON: {error}"))
        })?;
        object.set(name.as_str(), value_to_js(ctx, value)?)?;
    }
    Ok(object)
}

fn value_to_js<'js>(ctx: &Ctx<'js>, value: RawBsonRef<'_>) -> rquickjs::Result<Value<'js>> {
    use rquickjs::IntoJs;
    match value {
        RawBsonRef::Double(number) => number.into_js(ctx),
        RawBsonRef::Int32(number) => number.into_js(ctx),
        RawBsonRef::Int64(number) => (number as f64).into_js(ctx),
        RawBsonRef::String(text) => text.into_js(ctx),
        RawBsonRef::Boolean(flag) => flag.into_js(ctx),
        RawBsonRef::Null => Ok(Value::new_null(ctx.clone())),
        RawBsonRef::Undefined => Ok(Value::new_undefined(ctx.clone())),
        RawBsonRef::Document(inner) => document_to_js(ctx, inner).map(Object::into_value),
        RawBsonRef::Array(items) => {
            let array = Array::new(ctx.clone())?;
            for (position, item) in items.into_iter().enumerate() {
                let item = item.map_err(|error| {
                    rquickjs::Exception::throw_message(ctx, &format!("malformed BSON: {error}"))
                })?;
                array.set(position, value_to_js(ctx, item)?)?;
            }
            Ok(array.into_value())
        }
        RawBsonRef::DateTime(time) => {
            let date: rquickjs::Constructor = ctx.globals().get("Date")?;
            date.construct((time.timestamp_millis() as f64,))
        }
        RawBsonRef::ObjectId(id) => id.to_hex().into_js(ctx),
        other => match Bson::try_from(other) {
            Ok(Bson::String(text)) => text.into_js(ctx),
            Ok(decoded) => decoded.to_string().into_js(ctx),
            Err(error) => Err(rquickjs::Exception::throw_message(
                ctx,
                &format!("malformed BSON: {error}"),
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use bson::{DateTime, doc, rawdoc};

    use super::*;

    fn matches(source: &str, document: &bson::RawDocumentBuf) -> Result<bool> {
        WhereFunction::parse(&Bson::String(source.into()))?.matches(document)
    }

    #[test]
    fn expressions_and_functions_see_the_document_as_this() {
        let document = rawdoc! { "x": 2, "name": "ada", "tags": ["a", "b"], "at": DateTime::from_millis(86_400_000), "n": 5_i64, "sub": { "y": true } };
        for (source, expected) in [
            ("this.x < 3", true),
            ("this.x > 3", false),
            (
                "function() { return this.name === 'ada' && this.tags.length == 2; }",
                true,
            ),
            ("this.at.getUTCDate() == 2", true),
            ("this.n + 1 == 6 && this.sub.y", true),
            ("this.missing", false),
            ("'non-empty'", true),
        ] {
            assert_eq!(matches(source, &document).unwrap(), expected, "{source}");
        }
    }

    #[test]
    fn scripts_that_fail_report_the_engines_message() {
        let document = rawdoc! { "x": 1 };
        for (source, says) in [
            ("this.x <", "SyntaxError"),
            ("function() { throw new Error('boom'); }", "boom"),
            ("this.nothing.deeper", "undefined"),
        ] {
            let error = matches(source, &document).unwrap_err();
            match &error {
                DocError::Expression { code, message } => {
                    assert_eq!(*code, JS_INTERPRETER_FAILURE);
                    assert!(
                        message.contains(says) || message.contains("cannot read"),
                        "{source}: {message}"
                    );
                }
                other => panic!("{source}: {other:?}"),
            }
        }
        // The engine is still usable after a failure.
        assert!(matches("this.x == 1", &document).unwrap());
    }

    #[test]
    fn scope_and_other_types_are_refused() {
        let scoped = Bson::JavaScriptCodeWithScope(bson::JavaScriptCodeWithScope {
            code: "this.x < i".into(),
            scope: doc! { "i": 3 },
        });
        assert!(matches!(
            WhereFunction::parse(&scoped),
            Err(DocError::Expression {
                code: WHERE_SCOPE_REMOVED,
                ..
            })
        ));
        assert!(WhereFunction::parse(&Bson::Int32(5)).is_err());
        assert!(WhereFunction::parse(&Bson::JavaScriptCode("this.x".into())).is_ok());
    }

    #[test]
    fn a_deadline_interrupts_sleeps_and_loops() {
        let document = rawdoc! { "x": 1 };
        for source in [
            "function() { sleep(5000); return true; }",
            "function() { while (true) {} }",
        ] {
            let started = Instant::now();
            let error = with_deadline(Some(Instant::now() + Duration::from_millis(50)), || {
                matches(source, &document)
            })
            .unwrap_err();
            assert!(
                matches!(
                    error,
                    DocError::Expression {
                        code: MAX_TIME_MS_EXPIRED,
                        ..
                    }
                ),
                "{source}: {error:?}"
            );
            assert!(
                started.elapsed() < Duration::from_secs(4),
                "{source} ran past its deadline"
            );
        }
        // Outside the deadline the same thread evaluates as before.
        assert!(matches("function() { sleep(1); return true; }", &document).unwrap());
    }
}
