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
//! - **Time**: [`with_limits`] bounds every `$where` evaluated inside it by the operation's
//!   [`ScriptLimits`]: its `maxTimeMS` deadline, a time budget that applies without
//!   `maxTimeMS` (the command layer's script time limit, [`DEFAULT_SCRIPT_TIME_LIMIT`] unless
//!   configured), and an interrupt flag (`killOp`). Past a deadline a running script is
//!   interrupted, `sleep` returns early, and the evaluation fails with MongoDB's
//!   `MaxTimeMSExpired` (50); an interrupted one fails with `Interrupted` (11601). Outside
//!   any limits (the embedded API), each call is bounded by [`DEFAULT_SCRIPT_TIME_LIMIT`], so
//!   that no script holds a thread forever.
//! - **Threads**: a script runs on the thread of the operation that evaluates it, but scripts
//!   take turns on one core fewer than the machine has (at least one), so that clients
//!   running no script always find a core; a script waiting for its turn is still bounded by
//!   its operation's limits.
//! - **Documents** reach JavaScript as plain values: numbers (int32, int64 and doubles),
//!   strings, booleans, `null`, arrays, objects and `Date`s; other BSON types as their string
//!   form (an ObjectId as its hex string).
//! - **Errors** in the script (a syntax error, a thrown exception, memory exhausted) fail the
//!   operation with `JSInterpreterFailure` (139) and the engine's message.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, LazyLock, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bson::{Bson, RawBsonRef, RawDocument};
use rquickjs::function::This;
use rquickjs::{Array, Context, Ctx, Function, Object, Persistent, Runtime, Value};

use crate::error::{DocError, Result};

/// MongoDB's `JSInterpreterFailure`.
const JS_INTERPRETER_FAILURE: i32 = 139;
/// MongoDB's `MaxTimeMSExpired`.
const MAX_TIME_MS_EXPIRED: i32 = 50;
/// MongoDB's `Interrupted` (an operation killed by `killOp`).
const INTERRUPTED: i32 = 11601;
/// MongoDB's code for `$where` with a scope (removed in 4.4).
const WHERE_SCOPE_REMOVED: i32 = 4649200;
/// The memory one thread's engine may use.
const MEMORY_LIMIT: usize = 64 * 1024 * 1024;
/// The stack one thread's engine may use.
const STACK_LIMIT: usize = 1024 * 1024;
/// How long an operation's scripts may run together when nothing else says: the budget
/// that applies without `maxTimeMS`.
pub const DEFAULT_SCRIPT_TIME_LIMIT: Duration = Duration::from_secs(5);
/// How often a sleeping script looks at its interrupt flag.
const SLEEP_SLICE: Duration = Duration::from_millis(10);
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

/// What bounds the scripts of one operation.
#[derive(Debug, Clone, Default)]
pub struct ScriptLimits {
    /// The operation's own deadline (`maxTimeMS`).
    pub deadline: Option<Instant>,
    /// The script time budget: its length, and when it ends (counted from the operation's
    /// start). It applies with or without `maxTimeMS`.
    pub budget: Option<(Duration, Instant)>,
    /// Set (by `killOp`) to stop the operation's running script.
    pub interrupt: Option<Arc<AtomicBool>>,
}

impl ScriptLimits {
    /// Limits with the budget `budget` from now, and no deadline or interrupt flag.
    pub fn budget(budget: Duration) -> ScriptLimits {
        ScriptLimits {
            budget: Some((budget, Instant::now() + budget)),
            ..ScriptLimits::default()
        }
    }

    /// Why a script under these limits must stop now, if it must.
    fn stop(&self) -> Option<Stop> {
        if self
            .interrupt
            .as_ref()
            .is_some_and(|flag| flag.load(Ordering::Relaxed))
        {
            return Some(Stop::Interrupted);
        }
        let now = Instant::now();
        if self.deadline.is_some_and(|at| now >= at) {
            return Some(Stop::MaxTime);
        }
        match self.budget {
            Some((budget, at)) if now >= at => Some(Stop::Budget(budget)),
            _ => None,
        }
    }

    /// The first of the deadline and the budget's end.
    fn ends(&self) -> Option<Instant> {
        match (self.deadline, self.budget.map(|(_, at)| at)) {
            (Some(deadline), Some(budget)) => Some(deadline.min(budget)),
            (deadline, budget) => deadline.or(budget),
        }
    }
}

/// Why a script stopped before it returned.
enum Stop {
    MaxTime,
    Budget(Duration),
    Interrupted,
}

impl Stop {
    fn error(self) -> DocError {
        match self {
            Stop::MaxTime => DocError::Expression {
                code: MAX_TIME_MS_EXPIRED,
                message: "operation exceeded time limit".into(),
            },
            Stop::Budget(budget) => DocError::Expression {
                code: MAX_TIME_MS_EXPIRED,
                message: format!(
                    "operation exceeded time limit: its server-side JavaScript ran past the script time limit of {} ms",
                    budget.as_millis()
                ),
            },
            Stop::Interrupted => DocError::Expression {
                code: INTERRUPTED,
                message: "operation was interrupted".into(),
            },
        }
    }
}

thread_local! {
    /// This thread's engine, made by the first `$where` it evaluates.
    static ENGINE: RefCell<Option<Engine>> = const { RefCell::new(None) };
    /// The limits of the operation this thread runs, if it has any.
    static LIMITS: RefCell<Option<ScriptLimits>> = const { RefCell::new(None) };
}

/// Runs `body` with every `$where` it evaluates on this thread bounded by `limits`.
pub fn with_limits<R>(limits: ScriptLimits, body: impl FnOnce() -> R) -> R {
    let outer = LIMITS.with(|current| current.replace(Some(limits)));
    let result = body();
    LIMITS.with(|current| *current.borrow_mut() = outer);
    result
}

/// Runs `body` with every `$where` it evaluates on this thread bounded by `deadline` alone.
pub fn with_deadline<R>(deadline: Option<Instant>, body: impl FnOnce() -> R) -> R {
    with_limits(
        ScriptLimits {
            deadline,
            ..ScriptLimits::default()
        },
        body,
    )
}

fn has_limits() -> bool {
    LIMITS.with(|limits| limits.borrow().is_some())
}

fn stop() -> Option<Stop> {
    LIMITS.with(|limits| limits.borrow().as_ref().and_then(ScriptLimits::stop))
}

/// QuickJS's interrupt handler: whether the running script must stop.
fn must_stop() -> bool {
    stop().is_some()
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
        runtime.set_interrupt_handler(Some(Box::new(must_stop)));
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
        if !has_limits() {
            // Outside an operation's limits a call still ends: a script that never returns
            // must not hold a thread forever.
            return with_limits(ScriptLimits::budget(DEFAULT_SCRIPT_TIME_LIMIT), || {
                self.call(source, document)
            });
        }
        // Scripts take turns on fewer threads than there are cores, so that a core is always
        // left for clients that run no script.
        let _slot = ScriptSlot::acquire()?;
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
        // A script interrupted at a deadline or by killOp fails as that, not as a script error.
        if let Some(stop) = stop() {
            return Err(stop.error());
        }
        outcome.map_err(script_error)
    }
}

/// The scripts running now, and how many may run at once.
struct ScriptSlots {
    running: Mutex<usize>,
    freed: Condvar,
    capacity: usize,
}

static SCRIPT_SLOTS: LazyLock<ScriptSlots> = LazyLock::new(|| ScriptSlots {
    running: Mutex::new(0),
    freed: Condvar::new(),
    // One core fewer than the machine has (at least one): the rest serve other clients.
    capacity: std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .saturating_sub(1)
        .max(1),
});

/// One script's turn ([`SCRIPT_SLOTS`]), given back when dropped.
struct ScriptSlot;

impl ScriptSlot {
    /// Waits for a turn, until the operation's limits stop it (the wait counts against its
    /// time, as a busy server's would).
    fn acquire() -> Result<ScriptSlot> {
        let slots = &*SCRIPT_SLOTS;
        let mut running = slots.running.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(stop) = stop() {
                return Err(stop.error());
            }
            if *running < slots.capacity {
                *running += 1;
                return Ok(ScriptSlot);
            }
            // Woken when a turn is given back, or soon after to look at the limits again.
            running = slots
                .freed
                .wait_timeout(running, SLEEP_SLICE)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

impl Drop for ScriptSlot {
    fn drop(&mut self) {
        let slots = &*SCRIPT_SLOTS;
        let mut running = slots.running.lock().unwrap_or_else(PoisonError::into_inner);
        *running -= 1;
        drop(running);
        slots.freed.notify_one();
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

/// Sleeps `duration`, or until the operation's limits end it if that comes first, looking at
/// the interrupt flag every [`SLEEP_SLICE`].
fn sleep_until_deadline(duration: Duration) {
    let until = Instant::now() + duration;
    let until = LIMITS
        .with(|limits| limits.borrow().as_ref().and_then(ScriptLimits::ends))
        .map_or(until, |ends| ends.min(until));
    loop {
        let now = Instant::now();
        if now >= until || stop().is_some() {
            return;
        }
        std::thread::sleep((until - now).min(SLEEP_SLICE));
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

    #[test]
    fn a_budget_bounds_scripts_without_max_time_and_names_itself() {
        let document = rawdoc! { "x": 1 };
        let started = Instant::now();
        let error = with_limits(ScriptLimits::budget(Duration::from_millis(100)), || {
            matches("function() { while (true) {} }", &document)
        })
        .unwrap_err();
        match error {
            DocError::Expression { code, message } => {
                assert_eq!(code, MAX_TIME_MS_EXPIRED);
                assert!(message.contains("script time limit of 100 ms"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert!(started.elapsed() < Duration::from_secs(4));
    }

    #[test]
    fn an_interrupt_flag_stops_a_running_script_and_a_sleep() {
        let document = rawdoc! { "x": 1 };
        for source in [
            "function() { while (true) {} }",
            "function() { sleep(60000); return true; }",
        ] {
            let flag = Arc::new(AtomicBool::new(false));
            let limits = ScriptLimits {
                interrupt: Some(Arc::clone(&flag)),
                ..ScriptLimits::budget(Duration::from_secs(60))
            };
            let setter = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                flag.store(true, Ordering::SeqCst);
            });
            let started = Instant::now();
            let error = with_limits(limits, || matches(source, &document)).unwrap_err();
            setter.join().unwrap();
            assert!(
                matches!(
                    error,
                    DocError::Expression {
                        code: INTERRUPTED,
                        ..
                    }
                ),
                "{source}: {error:?}"
            );
            assert!(started.elapsed() < Duration::from_secs(4), "{source}");
        }
    }
}
