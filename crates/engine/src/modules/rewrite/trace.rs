//! The trace `htaccel explain` prints: every rule and condition tried,
//! with its outcome, and every internal redirect.
//!
//! A thread-local sink, switched on only around one explained request, so
//! that the serving path pays one flag test per rule list and builds no
//! text. The engine answers a request on one thread from start to end, so
//! everything the request does lands in the same sink.

use std::cell::RefCell;

thread_local! {
    static SINK: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// Run `f` with tracing on and return what it traced.
pub fn capture<R>(f: impl FnOnce() -> R) -> (R, Vec<String>) {
    let previous = SINK.with(|s| s.borrow_mut().replace(Vec::new()));
    let r = f();
    let lines = SINK.with(|s| std::mem::replace(&mut *s.borrow_mut(), previous));
    (r, lines.unwrap_or_default())
}

/// Whether a trace is being captured on this thread.
pub fn enabled() -> bool {
    SINK.with(|s| s.borrow().is_some())
}

/// Add a line to the trace, if one is being captured.
pub fn line(text: String) {
    SINK.with(|s| {
        if let Some(v) = s.borrow_mut().as_mut() {
            v.push(text);
        }
    });
}
