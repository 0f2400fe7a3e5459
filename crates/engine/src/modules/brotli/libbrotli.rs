//! The system's libbrotlienc, as mod_brotli uses it.
//!
//! Clients see the compressed bytes and their length, so htaccel runs the
//! encoder Apache's mod_brotli links, not a port: ports differ from it
//! (another quality level chooses other blocks). It is loaded when a
//! configuration loads `brotli_module`, by its soname, the way the dynamic
//! linker finds it for `mod_brotli.so`; where it is missing, Apache cannot
//! load the module either, and `LoadModule` fails the same way.
//!
//! The unsafe code is confined here: the library's six entry points with
//! their C signatures (`brotli/encode.h`), an encoder state owned by
//! [`State`] and destroyed on drop, and buffers handed to the library for
//! the duration of one call.

use std::ffi::{c_int, c_void};
use std::ptr::NonNull;
use std::sync::OnceLock;

/// The soname `mod_brotli.so` is linked against.
const SONAME: &str = "libbrotlienc.so.1";

type Create = unsafe extern "C" fn(*const c_void, *const c_void, *mut c_void) -> *mut c_void;
type SetParameter = unsafe extern "C" fn(*mut c_void, c_int, u32) -> c_int;
type CompressStream = unsafe extern "C" fn(
    *mut c_void,
    c_int,
    *mut usize,
    *mut *const u8,
    *mut usize,
    *mut *mut u8,
    *mut usize,
) -> c_int;
type HasMoreOutput = unsafe extern "C" fn(*mut c_void) -> c_int;
type TakeOutput = unsafe extern "C" fn(*mut c_void, *mut usize) -> *const u8;
type Destroy = unsafe extern "C" fn(*mut c_void);

/// `BrotliEncoderParameter`.
#[derive(Clone, Copy, Debug)]
pub enum Parameter {
    Quality = 1,
    Lgwin = 2,
    Lgblock = 3,
}

/// `BrotliEncoderOperation`.
#[derive(Clone, Copy, Debug)]
pub enum Operation {
    Process = 0,
    Flush = 1,
    Finish = 2,
}

/// The loaded library and its entry points.
pub struct Library {
    // Kept loaded for as long as the entry points are used (forever).
    _library: libloading::Library,
    create: Create,
    set_parameter: SetParameter,
    compress_stream: CompressStream,
    has_more_output: HasMoreOutput,
    take_output: TakeOutput,
    destroy: Destroy,
}

/// The library, loaded on first use; the loader's message if it cannot be.
pub fn library() -> Result<&'static Library, String> {
    static LIBRARY: OnceLock<Result<Library, String>> = OnceLock::new();
    LIBRARY.get_or_init(load).as_ref().map_err(Clone::clone)
}

fn load() -> Result<Library, String> {
    // SAFETY: libbrotlienc's initialisers only set up its own tables.
    let library = unsafe { libloading::Library::new(SONAME) }.map_err(|e| e.to_string())?;
    // SAFETY: each symbol is looked up with the signature encode.h gives
    // it; the pointers stay valid while `library` is loaded, which it
    // stays for the life of the process.
    unsafe {
        Ok(Library {
            create: *library
                .get::<Create>(b"BrotliEncoderCreateInstance\0")
                .map_err(|e| e.to_string())?,
            set_parameter: *library
                .get::<SetParameter>(b"BrotliEncoderSetParameter\0")
                .map_err(|e| e.to_string())?,
            compress_stream: *library
                .get::<CompressStream>(b"BrotliEncoderCompressStream\0")
                .map_err(|e| e.to_string())?,
            has_more_output: *library
                .get::<HasMoreOutput>(b"BrotliEncoderHasMoreOutput\0")
                .map_err(|e| e.to_string())?,
            take_output: *library
                .get::<TakeOutput>(b"BrotliEncoderTakeOutput\0")
                .map_err(|e| e.to_string())?,
            destroy: *library
                .get::<Destroy>(b"BrotliEncoderDestroyInstance\0")
                .map_err(|e| e.to_string())?,
            _library: library,
        })
    }
}

/// One encoder (`BrotliEncoderState`).
pub struct State {
    library: &'static Library,
    state: NonNull<c_void>,
}

impl State {
    /// A new encoder with the library's allocator; `None` when it cannot
    /// allocate one.
    pub fn new(library: &'static Library) -> Option<State> {
        // SAFETY: null allocator functions select malloc and free.
        let state =
            unsafe { (library.create)(std::ptr::null(), std::ptr::null(), std::ptr::null_mut()) };
        NonNull::new(state).map(|state| State { library, state })
    }

    pub fn set(&mut self, parameter: Parameter, value: u32) -> bool {
        // SAFETY: `state` is a live encoder.
        unsafe { (self.library.set_parameter)(self.state.as_ptr(), parameter as c_int, value) != 0 }
    }

    /// One `BrotliEncoderCompressStream` call with no output buffer of our
    /// own (the encoder keeps its output for [`State::take_output`]): the
    /// bytes of `input` from `*used` on are offered, `*used` advances by
    /// what the encoder took. Whether it succeeded.
    pub fn compress(&mut self, op: Operation, input: &[u8], used: &mut usize) -> bool {
        let rest = &input[*used..];
        let mut available_in = rest.len();
        let mut next_in = rest.as_ptr();
        let mut available_out = 0usize;
        let mut next_out: *mut u8 = std::ptr::null_mut();
        // SAFETY: `next_in` points at `available_in` readable bytes for the
        // call; no output buffer is given (`available_out` 0).
        let ok = unsafe {
            (self.library.compress_stream)(
                self.state.as_ptr(),
                op as c_int,
                &mut available_in,
                &mut next_in,
                &mut available_out,
                &mut next_out,
                std::ptr::null_mut(),
            )
        };
        *used += rest.len() - available_in;
        ok != 0
    }

    /// The output the encoder holds, appended to `out`; whether there was
    /// any.
    pub fn take_output(&mut self, out: &mut Vec<u8>) -> bool {
        // SAFETY: `state` is a live encoder.
        if unsafe { (self.library.has_more_output)(self.state.as_ptr()) } == 0 {
            return false;
        }
        let mut size = 0usize;
        // SAFETY: the returned pointer is valid for `size` bytes until the
        // next call on the encoder; they are copied at once.
        unsafe {
            let bytes = (self.library.take_output)(self.state.as_ptr(), &mut size);
            if !bytes.is_null() && size > 0 {
                out.extend_from_slice(std::slice::from_raw_parts(bytes, size));
            }
        }
        size > 0
    }
}

impl Drop for State {
    fn drop(&mut self) {
        // SAFETY: `state` came from `create` and is dropped once.
        unsafe { (self.library.destroy)(self.state.as_ptr()) }
    }
}
