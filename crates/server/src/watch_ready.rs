//! The engine's file-system watcher reads its inotify queue before each
//! request so that a change completed before the request arrived is in
//! force for it. An empty queue is the usual answer, and asking costs a
//! system call per request; this module lets each worker's event loop
//! answer instead, for free.
//!
//! The inotify descriptor is added to the worker's epoll set (edge-
//! triggered, through tokio's reactor). The kernel puts it on the ready list
//! inside the system call that changed the file, before the client can even
//! send the request that should see the change; the request's own bytes
//! are reported by the same or a later `epoll_wait`, and tokio records the
//! readiness of every descriptor a wait returns before it runs any task. So
//! when a request is handled, "not readable since the last read" means the
//! queue held nothing when the request arrived.

use std::cell::RefCell;
use std::os::fd::{BorrowedFd, OwnedFd, RawFd};
use std::task::{Context, Poll, Waker};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// The watcher's descriptor this thread registered (as the watcher numbers
/// it), and the registration, which holds a duplicate of it: the same open
/// inotify instance, so the same readiness.
struct Registered {
    watcher: u64,
    watcher_fd: RawFd,
    dup: AsyncFd<OwnedFd>,
}

thread_local! {
    static REGISTERED: RefCell<Option<Registered>> = const { RefCell::new(None) };
}

/// Install the probe on this worker thread.
pub(crate) fn install() {
    htaccel_engine::watch::set_readiness_probe(may_be_readable);
}

/// Whether the inotify descriptor `fd` of watcher number `watcher` may hold
/// events: true the first time
/// (it is registered now, and its past is unknown), then only when epoll
/// reported it readable since the last `true`.
fn may_be_readable(watcher: u64, fd: RawFd) -> bool {
    REGISTERED.with(|slot| {
        let mut slot = slot.borrow_mut();
        if let Some(registered) = slot
            .as_ref()
            .filter(|r| r.watcher == watcher && r.watcher_fd == fd)
        {
            let mut cx = Context::from_waker(Waker::noop());
            return match registered.dup.poll_read_ready(&mut cx) {
                Poll::Ready(Ok(mut ready)) => {
                    // Cleared before the caller reads the queue to its end:
                    // an event queued meanwhile makes a new edge.
                    ready.clear_ready();
                    true
                }
                Poll::Ready(Err(_)) => true,
                Poll::Pending => false,
            };
        }
        *slot = None;
        if tokio::runtime::Handle::try_current().is_err() {
            return true;
        }
        // SAFETY: the probe is called by the watcher that owns `fd`, from
        // inside one of its methods, so `fd` is open for this call.
        let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
        if let Ok(dup) = borrowed.try_clone_to_owned() {
            // SAFETY: the registration owns `dup`, which stays open until
            // the registration is dropped.
            if let Ok(dup) = unsafe { AsyncFd::register_with_interest(dup, Interest::READABLE) } {
                *slot = Some(Registered {
                    watcher,
                    watcher_fd: fd,
                    dup,
                });
            }
        }
        true
    })
}
